/* SPDX-License-Identifier: MIT */
/* Singly linked lists through a `next` member: how iwxd and libiwx keep their objects. */
#ifndef IWX_LIST_H
#define IWX_LIST_H

/* Take node out of the list whose first element is *head; nothing if it is not there. */
#define IWX_LIST_UNLINK(head, node)						\
	do {									\
		for (__typeof__(node) *pp_ = (head); *pp_; pp_ = &(*pp_)->next) {	\
			if (*pp_ == (node)) {					\
				*pp_ = (node)->next;				\
				break;						\
			}							\
		}								\
	} while (0)

#endif /* IWX_LIST_H */
