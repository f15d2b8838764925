// SPDX-License-Identifier: GPL-2.0
/*
 * nocollapse - run a program on a kernel that has no MADV_COLLAPSE.
 *
 * A kernel before 6.1 answers madvise(..., MADV_COLLAPSE) with EINVAL, and
 * the collapse stressor must then be skipped with that reason, never passed.
 * This makes the running kernel answer the same for real: a seccomp filter
 * returns EINVAL for madvise() with advice 25 and lets every other system
 * call, madvise() advice included, through; it is inherited across execve()
 * by the program and all its threads.
 *
 * Build: cc -O2 -Wall -o nocollapse nocollapse.c (tests/partners2/test_collapse.py
 * builds it in a temporary directory). Another advice and errno can be
 * refused with -DMADV_COLLAPSE_ADVICE=N -DREFUSE_ERRNO=E (the populate
 * partner's tests refuse MADV_POPULATE_READ with EINVAL, as a kernel before
 * 5.14 does, and MADV_POPULATE_WRITE with EHWPOISON, an error it must report).
 * Usage: nocollapse PROGRAM [ARGS...]
 * Exit: PROGRAM's status; 77 if seccomp filters are not available here;
 *       126 if PROGRAM cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE_ADVICE
#define MADV_COLLAPSE_ADVICE 25 /* Linux 6.1 */
#endif
#ifndef REFUSE_ERRNO
#define REFUSE_ERRNO EINVAL
#endif

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define NATIVE_ARCH AUDIT_ARCH_S390X
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "nocollapse: add this architecture's AUDIT_ARCH_*"
#endif

/* the low 32 bits of argument 2: madvise()'s advice is an int */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ADVICE_LO offsetof(struct seccomp_data, args[2])
#else
#define ADVICE_LO (offsetof(struct seccomp_data, args[2]) + 4)
#endif

static int install_filter(void)
{
	struct sock_filter insn[] = {
		/*
		 * System call numbers differ between ABIs: a call made through
		 * another one (int 0x80 on x86-64) is not our madvise, let it be
		 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ADVICE_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_COLLAPSE_ADVICE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (REFUSE_ERRNO & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { .len = sizeof(insn) / sizeof(insn[0]), .filter = insn };

	/* without it an unprivileged process may not install a filter */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: nocollapse PROGRAM [ARGS...]\n");
		return 2;
	}
	rc = install_filter();
	if (rc) {
		fprintf(stderr, "nocollapse: cannot install a seccomp filter: %s\n", strerror(-rc));
		return 77;
	}
	execv(argv[1], argv + 1);
	fprintf(stderr, "nocollapse: cannot run %s: %s\n", argv[1], strerror(errno));
	return 126;
}
