// SPDX-License-Identifier: GPL-2.0
/*
 * pinliar - run a program on a kernel whose process_vm_writev() misbehaves.
 *
 * The pin partner writes pages back through a pin (process_vm_writev of
 * its own memory) and must then find them holding what they held. This
 * makes the running kernel answer as a broken one would, for real, with a
 * seccomp filter inherited across execve() by the program and its threads:
 *   refuse  process_vm_writev() fails with EPERM, as under a container's
 *           seccomp profile: the partner must be skipped with that reason;
 *   lie     process_vm_writev() of a page or more is not run at all, and a
 *           supervisor (this process, through the filter's user
 *           notification, Linux 5.0+) answers that every byte was written:
 *           a write through a pin that did not land, which the partner must
 *           report as corruption. Smaller writes (its probe) run as usual.
 * Build: cc -O2 -Wall -o pinliar pinliar.c (tests/partners2/test_pin.py).
 * Usage: pinliar refuse|lie PROGRAM [ARGS...]
 * Exit: PROGRAM's status (128 + signal if killed); 77 if seccomp filters or
 *       user notifications are not available; 126 if PROGRAM cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "pinliar: add this architecture's AUDIT_ARCH_*"
#endif

/*
 * A filter that gives process_vm_writev() of this ABI @ret and lets every
 * other call through; @flags to seccomp(2). 0, the listener's fd with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER, or -errno.
 */
static int install_filter(unsigned ret, unsigned flags)
{
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, ret),
	};
	struct sock_fprog prog = { .len = sizeof(insn) / sizeof(insn[0]), .filter = insn };
	long rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	return rc < 0 ? -errno : (int)rc;
}

/* The bytes the call asks to write: its local iovecs, read from the caller's memory. */
static long long asked(pid_t tid, unsigned long long iov, unsigned long long n)
{
	char path[64];
	struct iovec v[64];
	long long sum = 0;
	unsigned long long i;
	int fd;

	if (n > 64)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, v, n * sizeof(v[0]), (off_t)iov) != (ssize_t)(n * sizeof(v[0]))) {
		close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < n; i++)
		sum += (long long)v[i].iov_len;
	return sum;
}

static int send_fd(int sock, int fd)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

/* Answer the child's process_vm_writev calls until it exits; its exit status. */
static int supervise(int listener, pid_t child)
{
	struct seccomp_notif *req = calloc(1, 4096);
	struct seccomp_notif_resp *resp = calloc(1, 4096);
	int status;

	for (;;) {
		struct pollfd p = { listener, POLLIN, 0 };
		pid_t r = waitpid(child, &status, WNOHANG);

		if (r == child)
			break;
		if (poll(&p, 1, 100) <= 0 || !(p.revents & POLLIN))
			continue;
		memset(req, 0, 4096);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req))
			continue; /* the caller went away */
		memset(resp, 0, 4096);
		resp->id = req->id;
		{
			long long n = asked(req->pid, req->data.args[1], req->data.args[2]);

			if (n >= 4096) {
				resp->val = n; /* "all written": nothing was */
			} else {
				resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			}
		}
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	free(req);
	free(resp);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	int sv[2], listener, rc;
	pid_t child;

	if (argc < 3 || (strcmp(argv[1], "refuse") && strcmp(argv[1], "lie"))) {
		fprintf(stderr, "usage: pinliar refuse|lie PROGRAM [ARGS...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "refuse")) {
		rc = install_filter(SECCOMP_RET_ERRNO | EPERM, 0);
		if (rc) {
			fprintf(stderr, "pinliar: cannot install a seccomp filter: %s\n",
				strerror(-rc));
			return 77;
		}
		execv(argv[2], argv + 2);
		fprintf(stderr, "pinliar: cannot run %s: %s\n", argv[2], strerror(errno));
		return 126;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 77;
	child = fork();
	if (child < 0)
		return 77;
	if (!child) {
		int fd;

		close(sv[0]);
		fd = install_filter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		if (fd < 0) {
			fprintf(stderr, "pinliar: no seccomp user notification here: %s\n",
				strerror(-fd));
			_exit(77);
		}
		if (send_fd(sv[1], fd))
			_exit(77);
		close(fd);
		close(sv[1]);
		execv(argv[2], argv + 2);
		fprintf(stderr, "pinliar: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(126);
	}
	close(sv[1]);
	listener = recv_fd(sv[0]);
	close(sv[0]);
	if (listener < 0) {
		int status;

		waitpid(child, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 77;
	}
	return supervise(listener, child);
}
