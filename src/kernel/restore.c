// SPDX-License-Identifier: GPL-2.0
/*
 * Settings a run changes, and putting them back (kselftest's thp_settings
 * habit): the first write to a file saves what it held; every way out of
 * the process writes the saved values back.
 *
 * The table is process-global on purpose: the fatal-signal handler and
 * atexit() get no context to find a run by. It is written under a mutex by
 * savers (never in a signal handler) and published entry by entry with a
 * release store of the count, so the async-signal-safe restore reads only
 * complete entries without taking any lock.
 *
 * Sealing: pmd_restore_all() first raises "sealed", then waits for the
 * writes under way to finish; a writer first counts itself in, then looks
 * at "sealed". With seq_cst on both sides (Dekker) either the restorer sees
 * the writer and waits for it, or the writer sees the seal and does not
 * write, so no write can land after the values were put back.
 *
 * One process at a time: two runs changing the same settings would each
 * save the other's values and "restore" them. The first save takes an
 * exclusive flock on a lock file, held until the process is gone (the
 * kernel drops it even after SIGKILL); a second process gets -EBUSY.
 *
 * SIGKILL (the OOM killer, kill -9) gives no way out to restore from: the
 * first save also starts a guardian process that does it then
 * (src/kernel/restore_guard.c).
 */
#include "restore.h"
#include "sigsafe.h"

#include "restore_guard.h"

#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define RESTORE_MAX 64
#define RESTORE_PATH 128
#define RESTORE_VALUE 96
/* how long the restorer waits for writes under way: 5000 x 1 ms */
#define RESTORE_WAIT_STEPS 5000
#define RESTORE_LOCK_DIR "/run/lock"
#define RESTORE_LOCK_NAME "pmdstress-settings.lock"

struct restore_entry {
	char path[RESTORE_PATH];
	char value[RESTORE_VALUE]; /* what to write back, e.g. "madvise" */
	size_t len;
};

/*
 * All zero (the mutex initializer is), so that its 15 KiB lie in .bss, not
 * .data: a page of .data is in memory once a neighbour is read (the
 * kernel's fault-around maps the file's pages around a fault), and every
 * fork of the fork and exec stressors copies each; of .bss only the pages
 * written are there.
 */
static struct {
	pthread_mutex_t lock; /* serializes savers */
	struct restore_entry e[RESTORE_MAX];
	unsigned n;	    /* atomic: entries published */
	unsigned writers;   /* atomic: pmd_restore_write() calls under way */
	unsigned sealed;    /* atomic: restoring began, no more writes */
	unsigned announced; /* atomic: the "restored" line was printed */
	pid_t owner;	    /* atomic: the process whose settings these are */
	bool atexit_done;   /* under lock */
	bool locked;	    /* under lock: lock_fd is the flocked lock file */
	int lock_fd;
} rs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- async-signal-safe helpers -------------------------------------------- */

static int write_value(const char *path, const char *value, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static void nap_1ms(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- saving (normal context) -------------------------------------------- */

static void restore_at_exit(void)
{
	pmd_restore_all();
}

void pmd_restore_install(void)
{
	pthread_mutex_lock(&rs.lock);
	__atomic_store_n(&rs.owner, getpid(), __ATOMIC_RELEASE);
	if (!rs.atexit_done && !atexit(restore_at_exit))
		rs.atexit_done = true;
	pthread_mutex_unlock(&rs.lock);
}

/* The one-run-at-a-time lock; called under rs.lock. Returns 0, -EBUSY or -errno. */
static int take_settings_lock(void)
{
	char path[64], pid[24];
	int fd, n;

	if (rs.locked)
		return 0;
	snprintf(path, sizeof(path), "%s/" RESTORE_LOCK_NAME,
		 access(RESTORE_LOCK_DIR, W_OK) ? "/tmp" : RESTORE_LOCK_DIR);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		if (err == -ENOSYS) {
			/* a kernel without CONFIG_FILE_LOCKING (a tinyconfig guest): no lock */
			fprintf(stderr, "pmdstress: this kernel has no file locks (flock: ENOSYS): "
					"nothing stops another run changing the same settings\n");
		} else {
			close(fd);
			return err;
		}
	}
	/* for whoever finds it held: who holds it (best effort) */
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (!ftruncate(fd, 0) && pwrite(fd, pid, (size_t)n, 0) != n) {
		/* not written: the lock holds all the same */
	}
	rs.lock_fd = fd;
	rs.locked = true;
	/* it keeps the lock too: released when the settings are back, however we end */
	pmd_guard_start(fd);
	return 0;
}

/* "always [madvise] never" -> "madvise"; "10000\n" -> "10000". */
static int current_value(const char *path, char *out, size_t outlen)
{
	char raw[512];
	const char *l, *r, *p = raw;
	size_t n;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	got = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (got < 0)
		return -errno;
	raw[got] = '\0';
	l = strchr(raw, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		p = l + 1;
		n = (size_t)(r - p);
	} else {
		n = strlen(raw);
		while (n && (raw[n - 1] == '\n' || raw[n - 1] == ' '))
			n--;
	}
	if (!n || n >= outlen)
		return -EINVAL;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int pmd_restore_save(const char *path)
{
	struct restore_entry *e;
	unsigned i, n;
	int err;

	if (strlen(path) >= RESTORE_PATH)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&rs.lock);
	if (!rs.atexit_done) {
		pthread_mutex_unlock(&rs.lock);
		pmd_restore_install(); /* a caller outside a run (a unit test) */
		pthread_mutex_lock(&rs.lock);
	}
	n = __atomic_load_n(&rs.n, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		if (!strcmp(rs.e[i].path, path)) {
			pthread_mutex_unlock(&rs.lock);
			return 0;
		}
	}
	if (n == RESTORE_MAX) {
		pthread_mutex_unlock(&rs.lock);
		return -ENOSPC;
	}
	err = take_settings_lock();
	if (err) {
		pthread_mutex_unlock(&rs.lock);
		return err;
	}
	e = &rs.e[n];
	err = current_value(path, e->value, sizeof(e->value));
	if (!err) {
		memcpy(e->path, path, strlen(path) + 1);
		e->len = strlen(e->value);
		/* release: a restorer that sees n + 1 sees the whole entry */
		__atomic_store_n(&rs.n, n + 1, __ATOMIC_RELEASE);
		/* before the first write: a SIGKILL from here on is the guardian's to mend */
		pmd_guard_saved(e->path, e->value, e->len);
	}
	pthread_mutex_unlock(&rs.lock);
	return err;
}

int pmd_restore_write(const char *path, const char *value)
{
	int err;

	/* Dekker with pmd_restore_all(): count in, then look at the seal */
	__atomic_add_fetch(&rs.writers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rs.sealed, __ATOMIC_SEQ_CST)) {
		err = -ECANCELED;
		goto out;
	}
	err = pmd_restore_save(path);
	if (!err)
		err = write_value(path, value, strlen(value));
out:
	/* release: our write happened before the restorer's */
	__atomic_sub_fetch(&rs.writers, 1, __ATOMIC_RELEASE);
	return err;
}

unsigned pmd_restore_count(void)
{
	return __atomic_load_n(&rs.n, __ATOMIC_ACQUIRE);
}

/* ---- restoring (any context, including signal handlers) ------------------ */

bool pmd_restore_is_owner(void)
{
	return getpid() == __atomic_load_n(&rs.owner, __ATOMIC_ACQUIRE);
}

unsigned pmd_restore_all(void)
{
	int saved_errno = errno;
	unsigned i, n, failed = 0, steps;

	/* a forked child inherits the table and handlers, not the settings' ownership */
	if (!pmd_restore_is_owner())
		return 0;
	__atomic_store_n(&rs.sealed, 1, __ATOMIC_SEQ_CST);
	for (steps = 0; __atomic_load_n(&rs.writers, __ATOMIC_SEQ_CST) && steps < RESTORE_WAIT_STEPS;
	     steps++)
		nap_1ms();
	n = __atomic_load_n(&rs.n, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		const struct restore_entry *e = &rs.e[i];
		int err = write_value(e->path, e->value, e->len);

		if (err) {
			failed++;
			pmd_sigsafe_put("pmdstress: cannot restore ");
			pmd_sigsafe_put(e->path);
			pmd_sigsafe_put(" to '");
			pmd_sigsafe_put(e->value);
			pmd_sigsafe_put("': errno ");
			pmd_sigsafe_put_num((unsigned long)-err, 10);
			pmd_sigsafe_put(" (write it back by hand)\n");
		}
	}
	if (n && !failed && !__atomic_exchange_n(&rs.announced, 1, __ATOMIC_RELAXED)) {
		pmd_sigsafe_put("pmdstress: restored ");
		pmd_sigsafe_put_num(n, 10);
		pmd_sigsafe_put(n == 1 ? " kernel setting" : " kernel settings");
		pmd_sigsafe_put(" to the values before the run\n");
	}
	pmd_guard_done();
	errno = saved_errno;
	return failed;
}
