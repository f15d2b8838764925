/* SPDX-License-Identifier: GPL-2.0 */
/* pmdstress plot: gnuplot charts (PNG and SVG) of JSON reports and --jsonl samples. */
#ifndef PMD_PLOT_H
#define PMD_PLOT_H

/* The subcommand: argv after "plot". Returns the exit status. */
int pmd_plot_main(int argc, char **argv);

#endif
