// SPDX-License-Identifier: MIT
/* The transports' rows, by the number a client names them with (transport.h). */
#include <stddef.h>

#include "transport.h"

const struct transport *transport_by_id(uint32_t id)
{
	static const struct transport *const rows[IWX_TRANSPORT_N] = {
		[IWX_TRANSPORT_TCP] = &transport_tcp,
		[IWX_TRANSPORT_SCTP] = &transport_sctp,
	};

	return id < IWX_TRANSPORT_N ? rows[id] : NULL;
}
