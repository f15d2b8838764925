// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberate data race. The TSan test builds and runs this first: if
 * ThreadSanitizer does not report it, a clean pmdstress run proves nothing.
 */
#include <pthread.h>
#include <stdio.h>

static long counter;

static void *bump(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 100000; i++)
		counter++;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, bump, NULL);
	pthread_create(&b, NULL, bump, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld\n", counter);
	return 0;
}
