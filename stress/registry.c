// SPDX-License-Identifier: GPL-2.0
/*
 * The stressors, in the order they are listed, set up and reported: an
 * explicit table (perf bench's way), no constructor tricks.
 */
#include <pmdstress/stressor.h>

#include <string.h>

extern const struct pmd_stressor pmd_stressor_fault;

const struct pmd_stressor *const pmd_stressors[] = {
	&pmd_stressor_fault,
	NULL,
};

const struct pmd_stressor *pmd_stressor_find(const char *name)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++)
		if (!strcmp(pmd_stressors[i]->name, name))
			return pmd_stressors[i];
	return NULL;
}

unsigned pmd_stressor_count(void)
{
	unsigned n = 0;

	while (pmd_stressors[n])
		n++;
	return n;
}
