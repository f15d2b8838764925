// SPDX-License-Identifier: GPL-2.0
/* The line of a JSON value by its path (errors about reports name it). */
#include "check.h"
#include "jsonline.h"

static const char doc[] = "{\n"
			  "  \"scenario\": \"race\",\n"
			  "  \"options\": {\n"
			  "    \"global\": {\"threads\": \"8\",\n"
			  "      \"size\": \"64M\"}\n"
			  "  },\n"
			  "  \"stressors\": [\n"
			  "    {\"name\": \"fault\", \"s\": \"a\\\"]}\\n\"},\n"
			  "    {\n"
			  "      \"name\": \"zap\",\n"
			  "      \"latency\": {\"zap\": {\"p99\": [1,\n"
			  "        2, {\"x\": null}]}}\n"
			  "    }\n"
			  "  ]\n"
			  "}\n";

static void line(const char *path, unsigned want)
{
	unsigned got = pmd_json_line_in(doc, sizeof(doc) - 1, path);

	CHECK(got == want, "'%s' is on line %u (got %u)", path, want, got);
}

int main(void)
{
	line("", 1);
	line("scenario", 2);
	line("options", 3);
	line("options.global", 4);
	line("options.global.threads", 4);
	line("options.global.size", 5);
	line("stressors", 7);
	line("stressors[0]", 8);
	line("stressors[0].name", 8);
	line("stressors[1]", 9); /* an escaped quote and bracket in a string are not syntax */
	line("stressors[1].name", 10);
	line("stressors[1].latency.zap.p99[1]", 12);
	line("stressors[1].latency.zap.p99[2].x", 12);
	/* missing: the deepest container on the way */
	line("options.global.nosuch", 4);
	line("stressors[1].ops_per_s", 9);
	line("stressors[5].name", 7);
	line("nosuch.deeper", 1);
	/* "options.global" is not on the way to "options.glob": "options" is */
	line("options.glob", 3);
	/* text that is not JSON: no line, no crash */
	CHECK(pmd_json_line_in("{\"a\": [1, 2", 11, "a[5]") == 1, "truncated: the way so far");
	CHECK(pmd_json_line_in("", 0, "a") == 0, "empty text: no line");
	CHECK(pmd_json_line_of("/nonexistent/x.json", "a") == 0, "a missing file: no line");
	return check_done();
}
