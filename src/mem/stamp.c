// SPDX-License-Identifier: GPL-2.0
/* Stamp decoding and the classification of a slot that does not match. */
#include <pmdstress/stamp.h>

#include <stddef.h>

bool pmd_stamp_decode(uint64_t key, uint64_t v, struct pmd_stamp_fields *f)
{
	uint64_t payload = v & ((1ull << 48) - 1);

	if (!v || ((pmd_stamp_mix(payload ^ key) << 48) | payload) != v)
		return false;
	f->domain = (unsigned)(payload >> 47) & 1;
	f->page = (uint32_t)(payload >> 21) & (PMD_STAMP_MAX_PAGES - 1);
	f->gen = (uint32_t)(payload >> 9) & 0xfff;
	f->slot = (uint32_t)payload & 0x1ff;
	return true;
}

enum pmd_class pmd_stamp_classify(uint64_t key, uint64_t actual, uint64_t expected,
				  uint32_t page, uint32_t gen, uint32_t slot, unsigned domain)
{
	struct pmd_stamp_fields f;
	bool ours;

	if (actual == expected)
		return PMD_CLASS_OK;
	if (actual == 0)
		return PMD_CLASS_LOST_WRITE;
	ours = pmd_stamp_decode(key, actual, &f);
	/* The other side of a fork wrote here: copy-on-write leaked. */
	if (ours && f.domain != domain)
		return PMD_CLASS_COW_LEAK;
	if (!ours || f.page != (page & (PMD_STAMP_MAX_PAGES - 1)) || f.slot != (slot & 0x1ff))
		return PMD_CLASS_FOREIGN;
	/* Right page and slot, wrong generation: old data outlived a zap. */
	if (expected == 0)
		return PMD_CLASS_NONZERO_AFTER_ZAP;
	if (f.gen != (gen & 0xfff))
		return PMD_CLASS_STALE;
	return PMD_CLASS_FOREIGN;
}

const char *pmd_class_name(enum pmd_class c)
{
	static const char *const names[PMD_CLASS_COUNT] = {
		[PMD_CLASS_OK] = "OK",
		[PMD_CLASS_LOST_WRITE] = "LOST_WRITE",
		[PMD_CLASS_STALE] = "STALE",
		[PMD_CLASS_FOREIGN] = "FOREIGN",
		[PMD_CLASS_NONZERO_AFTER_ZAP] = "NONZERO_AFTER_ZAP",
		[PMD_CLASS_COW_LEAK] = "COW_LEAK",
	};

	return (unsigned)c < PMD_CLASS_COUNT ? names[c] : "?";
}
