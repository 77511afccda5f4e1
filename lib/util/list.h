/* SPDX-License-Identifier: MIT */
/*
 * Singly linked lists through a `next` member: how iwxd and libiwx keep their objects;
 * and doubly linked ones through a struct iwx_link, for what iwxd must take out in
 * constant time however long the list (queue pairs waiting for their turn).
 */
#ifndef IWX_LIST_H
#define IWX_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "util/container_of.h"

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

/* A list's head, or a member of one (both NULL while on none: zeroed memory is on none). */
struct iwx_link {
	struct iwx_link	*prev, *next;
};

static inline void iwx_link_init(struct iwx_link *head)
{
	head->prev = head->next = head;
}

static inline bool iwx_link_empty(const struct iwx_link *head)
{
	return head->next == head;
}

static inline bool iwx_linked(const struct iwx_link *n)
{
	return n->next != NULL;
}

static inline void iwx_link_add_tail(struct iwx_link *head, struct iwx_link *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

/* Take n out of its list, if it is on one. */
static inline void iwx_link_del(struct iwx_link *n)
{
	if (!n->next)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

/* Move every member of from to the end of to; from is left empty. */
static inline void iwx_link_splice(struct iwx_link *to, struct iwx_link *from)
{
	if (iwx_link_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	iwx_link_init(from);
}

/* Each object of type on the list head, as pos; pos may be taken out of it meanwhile. */
#define IWX_LINK_EACH(type, pos, head, member)						\
	for (type *pos = container_of((head)->next, type, member),			\
		  *pos##_next_ = container_of(pos->member.next, type, member);		\
	     &pos->member != (head);							\
	     pos = pos##_next_, pos##_next_ = container_of(pos->member.next, type, member))

#endif /* IWX_LIST_H */
