// SPDX-License-Identifier: MIT
/*
 * A stand-in libefa.so.1 for iwx exec (see mlx5.c), for perftest and libfabric's EFA
 * provider: iwx0 is no EFA device.
 */
#include <errno.h>
#include <stddef.h>

#include <infiniband/efadv.h>

static void *none(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx, struct ibv_qp_init_attr_ex *attr_ex,
				  struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	(void)ibvctx, (void)attr_ex, (void)efa_attr, (void)inlen;
	return none();
}

int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	(void)ibvctx, (void)attr, (void)inlen;
	return EOPNOTSUPP;
}

int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr, uint32_t inlen)
{
	(void)ibvah, (void)attr, (void)inlen;
	return EOPNOTSUPP;
}

struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx, struct ibv_cq_init_attr_ex *attr_ex,
				  struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	(void)ibvctx, (void)attr_ex, (void)efa_attr, (void)inlen;
	return none();
}

/* No CQ of iwx0 is an EFA CQ (rdma-core's would read EFA's own struct behind it). */
struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	(void)ibvcqx;
	return none();
}
