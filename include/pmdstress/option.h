/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one option table type. Global options and every stressor's private
 * options are described by arrays of struct pmd_option; the same entry drives
 * the command line (--name, --stressor-name), INI files ([global] and one
 * section per stressor), --help, "did you mean" hints, validation and the
 * "options" block of the JSON report. Each option name is written once.
 */
#ifndef PMDSTRESS_OPTION_H
#define PMDSTRESS_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pmd_opt_type {
	PMD_OPT_BOOL,	  /* bool: on/off, yes/no, true/false, 1/0 */
	PMD_OPT_UINT,	  /* uint64_t, decimal or 0x hex */
	PMD_OPT_SIZE,	  /* uint64_t bytes; K/M/G/T suffixes (binary) */
	PMD_OPT_DURATION, /* uint64_t nanoseconds; ns/us/ms/s/m/h, bare = s */
	PMD_OPT_ENUM,	  /* unsigned: index into .allowed */
	PMD_OPT_STRING,	  /* char[PMD_OPT_STRLEN] */
	PMD_OPT_SHARE,	  /* struct pmd_share: "N", "P%" or "rest" */
};

#define PMD_OPT_STRLEN 256

/* A share of the run's threads: a count, a percentage, or the remainder. */
struct pmd_share {
	uint32_t count; /* used when !pct && !rest */
	uint32_t pct;	/* 1..100 when set */
	bool rest;
};

enum pmd_opt_flags {
	PMD_OPTF_HIDDEN = 1u << 0,   /* test-only: not in --help, still echoed */
	PMD_OPTF_CLI_ONLY = 1u << 1, /* not accepted in INI files */
	PMD_OPTF_NO_ECHO = 1u << 2,  /* not echoed in the JSON options block */
};

struct pmd_option {
	const char *name;
	enum pmd_opt_type type;
	size_t offset;		    /* into the struct the table describes */
	const char *def;	    /* default, as text, parsed like user input */
	uint64_t min, max;	    /* inclusive range for UINT/SIZE/DURATION */
	const char *const *allowed; /* ENUM values, NULL-terminated */
	const char *help;
	unsigned flags;
};

#define PMD_OPT_END                                                                                \
	{                                                                                          \
		.name = NULL                                                                       \
	}

/*
 * Parse @text into the field @opt describes inside @base. On error returns
 * -EINVAL or -ERANGE and writes one line naming the option, the value and
 * what is allowed into @err.
 */
int pmd_opt_parse(const struct pmd_option *opt, void *base, const char *text, char *err,
		  size_t errlen);
/* Apply every default of @table to @base. Returns 0 or the first error. */
int pmd_opt_defaults(const struct pmd_option *table, void *base, char *err, size_t errlen);
/* Format the current value of @opt inside @base the way a user would type it. */
void pmd_opt_format(const struct pmd_option *opt, const void *base, char *buf, size_t len);
const struct pmd_option *pmd_opt_find(const struct pmd_option *table, const char *name);
/* The closest name in @table to @name by edit distance, or NULL if none is close. */
const char *pmd_opt_suggest(const struct pmd_option *table, const char *name);
/* Describe the type and range of @opt for help and error text ("size 2M..64G"). */
void pmd_opt_describe(const struct pmd_option *opt, char *buf, size_t len);

/*
 * Make @err one line whatever a value in it held: each control byte becomes
 * \xNN (what does not fit in @len is cut).
 */
void pmd_err_one_line(char *err, size_t len);
/* printf into @err (one line for the user, pmd_err_one_line()) and return -EINVAL. */
int pmd_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline bool pmd_opt_bool(const void *base, const struct pmd_option *opt)
{
	return *(const bool *)((const char *)base + opt->offset);
}

#endif
