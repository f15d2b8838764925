/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The four NUMA memory-policy system calls, called directly.
 *
 * libnuma's <numaif.h> functions are thin wrappers of these same syscalls,
 * but linking libnuma also runs its constructor (it reads /proc and sysfs
 * in every process that starts, the exec stressor's children included) and
 * a static link drags in its getaddrinfo user. <numaif.h> still supplies the
 * MPOL_* constants. Each returns what the syscall returns, errno on -1.
 */
#ifndef PMDSTRESS_NUMASYS_H
#define PMDSTRESS_NUMASYS_H

#include <numaif.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long pmd_mbind(void *addr, unsigned long len, int mode, const unsigned long *mask,
			     unsigned long maxnode, unsigned flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static inline long pmd_get_mempolicy(int *mode, unsigned long *mask, unsigned long maxnode,
				     void *addr, unsigned long flags)
{
	return syscall(SYS_get_mempolicy, mode, mask, maxnode, addr, flags);
}

static inline long pmd_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
				  int *status, int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

static inline long pmd_migrate_pages(int pid, unsigned long maxnode, const unsigned long *from,
				     const unsigned long *to)
{
	return syscall(SYS_migrate_pages, pid, maxnode, from, to);
}

#endif
