// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

pid_t child_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(CHILD_NO_DROP);
		_exit(fn(arg));
	}
	return pid;
}

int child_wait(pid_t pid, int ms)
{
	int status;

	for (int t = 0; t < ms / 10; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		poll(NULL, 0, 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int run_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg)
{
	pid_t pid = child_as(uid, gid, fn, arg);
	int status;

	cr_assert_geq(pid, 0, "fork");
	status = child_wait(pid, CHILD_MS);
	cr_assert(WIFEXITED(status), "the child ended (wait status 0x%x)", status);
	cr_assert_neq(WEXITSTATUS(status), CHILD_NO_DROP, "the child could not become the user");
	return WEXITSTATUS(status);
}
