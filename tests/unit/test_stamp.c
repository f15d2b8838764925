// SPDX-License-Identifier: GPL-2.0
/* Stamps: never zero, decodable, and every mismatch gets the right class. */
#include "check.h"

#include <pmdstress/stamp.h>

int main(void)
{
	const uint64_t key = pmd_stamp_mix(12345);
	const uint32_t page = 777, gen = 9, slot = 5;
	uint64_t good = pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, page, gen, slot);
	struct pmd_stamp_fields f;
	unsigned zeros = 0, bad_decode = 0, collisions = 0;
	uint32_t p, g, s;

	/* never zero; the fields round-trip; another key does not verify */
	for (p = 0; p < 2000; p += 7)
		for (g = 1; g <= 4095; g += 97)
			for (s = 0; s < 512; s += 31) {
				uint64_t v = pmd_stamp(key, p & 1, p, g, s);

				zeros += v == 0;
				if (!pmd_stamp_decode(key, v, &f) || f.page != p || f.gen != g ||
				    f.slot != s || f.domain != (p & 1))
					bad_decode++;
				collisions += pmd_stamp_decode(key ^ 1, v, &f);
			}
	CHECK(zeros == 0, "no stamp is zero");
	CHECK(bad_decode == 0, "every field decodes back");
	CHECK(collisions < 20, "a stamp of another run (key) rarely verifies: %u of ~15000",
	      collisions);
	CHECK(!pmd_stamp_decode(key, 0, &f), "zero is not a stamp");
	CHECK(!pmd_stamp_decode(key, 0xdeadbeefcafef00dull, &f), "garbage is not a stamp");

#define CLASS(actual, expected, want, what)                                                        \
	CHECK(pmd_stamp_classify(key, actual, expected, page, gen, slot, PMD_STAMP_DOMAIN_RUN) ==  \
		      want,                                                                        \
	      "%s -> %s", what, pmd_class_name(want))

	CLASS(good, good, PMD_CLASS_OK, "the expected stamp");
	CLASS(0, good, PMD_CLASS_LOST_WRITE, "zero where a stamp was written");
	CLASS(pmd_stamp(key, 0, page, gen - 1, slot), good, PMD_CLASS_STALE,
	      "this slot's stamp of the previous generation");
	CLASS(pmd_stamp(key, 0, page + 1, gen, slot), good, PMD_CLASS_FOREIGN,
	      "the next page's stamp");
	CLASS(pmd_stamp(key, 0, page, gen, slot + 1), good, PMD_CLASS_FOREIGN,
	      "another worker's stamp");
	CLASS(0x1234567812345678ull, good, PMD_CLASS_FOREIGN, "garbage");
	CLASS(pmd_stamp(key, 0, page, gen - 1, slot), 0, PMD_CLASS_NONZERO_AFTER_ZAP,
	      "old data where a zap left zeros");
	CLASS(pmd_stamp(key, 0, page + 3, gen - 1, slot), 0, PMD_CLASS_FOREIGN,
	      "another page's old data where zeros were expected");
	CLASS(pmd_stamp(key, PMD_STAMP_DOMAIN_CHILD, page, gen, slot), good, PMD_CLASS_COW_LEAK,
	      "a fork child's stamp in the parent");
	CHECK(pmd_stamp_classify(key, good, pmd_stamp(key, 1, page, gen, slot), page, gen, slot,
				 PMD_STAMP_DOMAIN_CHILD) == PMD_CLASS_COW_LEAK,
	      "the parent's stamp where the child wrote -> COW_LEAK");
	CHECK_STR(pmd_class_name(PMD_CLASS_NONZERO_AFTER_ZAP), "NONZERO_AFTER_ZAP", "class name");
	return check_done();
}
