// SPDX-License-Identifier: MIT
/*
 * The verbs an iWARP RNIC over TCP has no use for (address handles, multicast,
 * imported objects, ECE): they fail as rdma-core's do on a
 * device without them, with EOPNOTSUPP, so that programs that probe for them go on.
 * And the names verbs gives its enums, for messages.
 */
#include <errno.h>
#include <stdio.h>

#include "iwxv.h"

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd, (void)attr;
	return iwxv_fail(EOPNOTSUPP);
}

int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *attr)
{
	(void)ctx, (void)port, (void)wc, (void)grh, (void)attr;
	return EOPNOTSUPP;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port)
{
	(void)pd, (void)wc, (void)grh, (void)port;
	return iwxv_fail(EOPNOTSUPP);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx, struct ibv_ah_attr *attr,
				uint8_t eth_mac[6], uint16_t *vid)
{
	(void)ctx, (void)attr, (void)eth_mac, (void)vid;
	return EOPNOTSUPP;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return iwxv_fail(EOPNOTSUPP);
}

struct ibv_pd *ibv_import_pd(struct ibv_context *ctx, uint32_t handle)
{
	(void)ctx, (void)handle;
	return iwxv_fail(EOPNOTSUPP);
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	(void)pd, (void)handle;
	return iwxv_fail(EOPNOTSUPP);
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *ctx, uint32_t handle)
{
	(void)ctx, (void)handle;
	return iwxv_fail(EOPNOTSUPP);
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

/* A provider library registering itself: there are none beside iwx. */
void ibv_register_driver(const char *name, void *init);
void ibv_register_driver(const char *name, void *init)
{
	(void)name, (void)init;
}

/* ------------------------------------------------------------------- names */

#define NAME(table, i)	((unsigned)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? \
			 table[i] : "unknown")

const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const n[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter", [IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router", [IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC", [IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return NAME(n, t);
}

const char *ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = {
		[IBV_PORT_NOP] = "no state change (NOP)", [IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init", [IBV_PORT_ARMED] = "armed", [IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return NAME(n, s);
}

const char *ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const n[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error", [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established", [IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated", [IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error", [IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error", [IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change", [IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error", [IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration", [IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return NAME(n, e);
}

const char *ibv_wc_status_str(enum ibv_wc_status s)
{
	static const char *const n[] = {
		[IBV_WC_SUCCESS] = "success", [IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error", [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error", [IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error", [IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error", [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state", [IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error", [IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error", [IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return NAME(n, s);
}

/* --------------------------------------------------------------------- rates */

static const struct { enum ibv_rate rate; int mult, mbps; } rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 }, { IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 }, { IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 }, { IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_100_GBPS, 40, 100000 }, { IBV_RATE_200_GBPS, 80, 200000 },
	{ IBV_RATE_400_GBPS, 160, 400000 },
};

enum rate_col { BY_RATE, BY_MULT, BY_MBPS };

/* The row whose column col holds v, or -1. */
static int rate_row(enum rate_col col, int v)
{
	for (int i = 0; i < (int)(sizeof(rates) / sizeof(rates[0])); i++)
		if ((col == BY_RATE ? (int)rates[i].rate : col == BY_MULT ? rates[i].mult :
								  rates[i].mbps) == v)
			return i;
	return -1;
}

int ibv_rate_to_mult(enum ibv_rate rate)
{
	int i = rate_row(BY_RATE, rate);

	return i < 0 ? -1 : rates[i].mult;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	int i = rate_row(BY_MULT, mult);

	return i < 0 ? IBV_RATE_MAX : rates[i].rate;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	int i = rate_row(BY_RATE, rate);

	return i < 0 ? -1 : rates[i].mbps;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	int i = rate_row(BY_MBPS, mbps);

	return i < 0 ? IBV_RATE_MAX : rates[i].rate;
}
