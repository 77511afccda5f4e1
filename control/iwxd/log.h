/* SPDX-License-Identifier: MIT */
/* iwxd's log: one line per event on stderr, quiet by default, -v for info, -vv for debug. */
#ifndef IWX_LOG_H
#define IWX_LOG_H

/* NOTICE: what iwxd says without -v, once at start and once at its end */
enum iwx_log_level { IWX_LOG_ERR, IWX_LOG_WARN, IWX_LOG_NOTICE, IWX_LOG_INFO, IWX_LOG_DEBUG };

extern int iwx_log_level;	/* messages up to this level are printed; IWX_LOG_NOTICE by default */

void iwx_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)	iwx_log(IWX_LOG_ERR, __VA_ARGS__)
#define log_warn(...)	iwx_log(IWX_LOG_WARN, __VA_ARGS__)
#define log_notice(...)	iwx_log(IWX_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	iwx_log(IWX_LOG_INFO, __VA_ARGS__)
#define log_debug(...)	iwx_log(IWX_LOG_DEBUG, __VA_ARGS__)

#endif /* IWX_LOG_H */
