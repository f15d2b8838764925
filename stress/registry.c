// SPDX-License-Identifier: GPL-2.0
/*
 * The stressors, in the order they are listed, set up and reported: an
 * explicit table (perf bench's way), no constructor tricks.
 */
#include <pmdstress/stressor.h>

#include <string.h>

extern const struct pmd_stressor pmd_stressor_fault;
extern const struct pmd_stressor pmd_stressor_toggle;
extern const struct pmd_stressor pmd_stressor_zap;
extern const struct pmd_stressor pmd_stressor_split;
extern const struct pmd_stressor pmd_stressor_collapse;
extern const struct pmd_stressor pmd_stressor_populate;
extern const struct pmd_stressor pmd_stressor_pin;
extern const struct pmd_stressor pmd_stressor_lock;
extern const struct pmd_stressor pmd_stressor_ksm;
extern const struct pmd_stressor pmd_stressor_softdirty;
extern const struct pmd_stressor pmd_stressor_procwalk;
extern const struct pmd_stressor pmd_stressor_sysfs;
extern const struct pmd_stressor pmd_stressor_fork;
extern const struct pmd_stressor pmd_stressor_exec;
extern const struct pmd_stressor pmd_stressor_brk;
extern const struct pmd_stressor pmd_stressor_page;
extern const struct pmd_stressor pmd_stressor_migrate;

const struct pmd_stressor *const pmd_stressors[] = {
	&pmd_stressor_fault,
	&pmd_stressor_toggle,
	&pmd_stressor_zap,
	&pmd_stressor_split,
	&pmd_stressor_collapse,
	&pmd_stressor_populate,
	&pmd_stressor_pin,
	&pmd_stressor_lock,
	&pmd_stressor_ksm,
	&pmd_stressor_softdirty,
	&pmd_stressor_procwalk,
	&pmd_stressor_sysfs,
	&pmd_stressor_fork,
	&pmd_stressor_exec,
	&pmd_stressor_brk,
	&pmd_stressor_page,
	&pmd_stressor_migrate,
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
