"""Bench: importing a synthetic HardTests-shaped dataset (problems/s and memory).

    .venv/bin/python bench/import.py [--sizes 10000,50000] [--kit-every 10] [--tests 40]
                                     [--format parquet|jsonl] [--keep DIR]

For each size it writes a HardTests problems file and a tests file (every --kit-every-th
problem has a test-case kit and --tests tests, encoded as HardTests encodes them: base64 of
zlib of a pickle of JSON), then imports the pair with `import_dataset hardtests` in a fresh
process with a throwaway HARDTESTS_VAR_DIR (its own SQLite database and blob storage), so
the development database is never touched. The child samples its resident memory every
50 ms while importing; the parent prints problems per second, the peak RSS (getrusage
maxrss) and how far RSS rose above the level after start-up and migrations. Comparing two
sizes shows whether memory grows with the file.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
STATEMENT = ("You are given an array of $n$ integers $a_1, \\dots, a_n$. " * 12).strip()
VALIDATOR = "def validate_input(input_str):\n    lines = input_str.split('\\n')\n    return len(lines) >= 2\n"
REGULAR = "import random\n\ndef gen_range_based_input():\n    n = random.randint(1, 100)\n    return f'{n}\\n' + ' '.join(map(str, range(n)))\n"
HACKING = "def gen_hacking_input_max():\n    return '100000\\n' + ' '.join(['1000000000'] * 100000)\n"


def _encode(tests: list[dict[str, str]]) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode("ascii")


def problem_row(i: int, rng: random.Random) -> dict[str, Any]:
    n = rng.randint(1, 20)
    sample_in = f"{n}\n" + " ".join(str(rng.randint(1, 99)) for _ in range(n)) + "\n"
    return {
        "pid": f"synthetic_{i:06d}",
        "question_title": f"Synthetic problem {i}",
        "question_content": f"{STATEMENT}\n\nProblem {i}: print the sum.",
        "question_content_all_languages": None,
        "platform": "codeforces",
        "contest_date": "2024-01-01",
        "difficulty_ratings": [{"level": str(800 + (i % 20) * 100), "score": 800 + (i % 20) * 100,
                                "source": "codeforces"}],
        "public_test_cases": [{"input": sample_in, "output": "42\n", "testtype": "stdin"}],
        "time_limit": "2 seconds",
        "memory_limit": "256 megabytes",
        "url": f"https://codeforces.com/contest/{100000 + i}/problem/A",
        "tags": [{"content": ["math", f"tag{i % 50}"], "source": "codeforces"}],
        "source_dataset_info": {"dataset_name": "synthetic", "idx": i, "split": "train"},
        "solutions": [
            {"code": f"#include <cstdio>\n// {i}\nint main(){{long long s=0,x;int n;scanf(\"%d\",&n);"
                     f"while(n--){{scanf(\"%lld\",&x);s+=x;}}printf(\"%lld\\n\",s);}}\n",
             "language": "cpp", "source": "codecontests", "source_reliability": "high"},
            {"code": f"# {i}\ninput()\nprint(sum(map(int, input().split())))\n", "language": "python",
             "source": "taco", "source_reliability": "low"},
        ],
        "starter_code": "",
    }


def tests_row(i: int, rng: random.Random, count: int) -> dict[str, Any]:
    tests = []
    for _ in range(count):
        n = rng.randint(5, 60)
        values = [rng.randint(1, 10**9) for _ in range(n)]
        tests.append({"input": f"{n}\n{' '.join(map(str, values))}\n", "output": f"{sum(values)}\n"})
    direct = min(10, count)
    regular = (count - direct) // 2
    return {
        "pid": f"synthetic_{i:06d}",
        "test_cases_kit": {
            "pid": f"synthetic_{i:06d}",
            "input_generation": {
                "LLMGen": [t["input"] for t in tests[:direct]],
                "RPGen": {"code": REGULAR, "func_names": ["gen_range_based_input"]},
                "SPGen": None,
                "HackGen": {"code": HACKING, "func_names": ["gen_hacking_input_max"]},
            },
            "input_validator": VALIDATOR,
            "output_judging_function": None,
        },
        "mapping": {"LLMGen": list(range(direct)), "RPGen": [list(range(direct, direct + regular))], "SPGen": [],
                    "HackGen": [list(range(direct + regular, count))]},
        "test_cases": _encode(tests),
    }


def write_dataset(folder: Path, size: int, kit_every: int, tests: int, fmt: str) -> tuple[Path, Path]:
    rng = random.Random(size)
    problems_path, tests_path = folder / f"problems.{fmt}", folder / f"tests.{fmt}"
    batch = 500
    if fmt == "jsonl":
        with problems_path.open("w") as p, tests_path.open("w") as t:
            for i in range(size):
                p.write(json.dumps(problem_row(i, rng)) + "\n")
                if i % kit_every == 0:
                    t.write(json.dumps(tests_row(i, rng, tests)) + "\n")
        return problems_path, tests_path
    import pyarrow as pa
    import pyarrow.parquet as pq

    # The published schemas live with the exporter, which imports Django models: set Django up
    # pointing at this run's throwaway folder (the parent never opens the database).
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("HARDTESTS_VAR_DIR", str(folder / "parent-var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    import django

    django.setup()
    from problems.exporters.hardtests import PROBLEMS_SCHEMA, TESTS_SCHEMA

    with pq.ParquetWriter(problems_path, PROBLEMS_SCHEMA) as pw, pq.ParquetWriter(tests_path, TESTS_SCHEMA) as tw:
        for start in range(0, size, batch):
            rows = [problem_row(i, rng) for i in range(start, min(size, start + batch))]
            kits = [tests_row(i, rng, tests) for i in range(start, min(size, start + batch)) if i % kit_every == 0]
            pw.write_table(pa.Table.from_pylist(rows, schema=PROBLEMS_SCHEMA))
            if kits:
                tw.write_table(pa.Table.from_pylist(kits, schema=TESTS_SCHEMA))
    return problems_path, tests_path


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child(paths: list[str]) -> None:
    """Runs in the fresh process: migrate, then import while sampling RSS."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from problems.importers.runner import dataset_import

    call_command("migrate", verbosity=0)
    baseline = _rss_kb()
    before = resource.getrusage(resource.RUSAGE_SELF)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()
    started = time.monotonic()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.monotonic() - started, _rss_kb()))
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    summary = dataset_import(format_name="hardtests", paths=paths)
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_SELF)
    peak = max(rss for _, rss in samples)
    # RSS at the end of each tenth of the run: flat means memory does not grow with the file.
    tenths = [max((rss for t, rss in samples if t <= (k + 1) * samples[-1][0] / 10), default=0) // 1024
              for k in range(10)]
    print(json.dumps({
        "summary": summary,
        "baseline_rss_mb": baseline // 1024,
        "peak_rss_mb": peak // 1024,
        "rise_mb": (peak - baseline) // 1024,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "rss_by_tenth_mb": tenths,
        "user_cpu_s": round(after.ru_utime - before.ru_utime, 1),
        "system_cpu_s": round(after.ru_stime - before.ru_stime, 1),
    }))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--kit-every", type=int, default=10, help="every Nth problem has a kit and tests")
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--format", choices=("parquet", "jsonl"), default="parquet")
    parser.add_argument("--keep", default=None, help="keep the generated files and databases under DIR")
    parser.add_argument("--media-root", default=None,
                        help="blob storage folder (e.g. on /dev/shm, to separate disk cost from the import's)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        work = Path(args.keep or tempfile.mkdtemp(prefix="bench-import-")) / f"n{size}"
        work.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        files = write_dataset(work, size, args.kit_every, args.tests, args.format)
        written = time.monotonic() - began
        env = dict(os.environ, HARDTESTS_VAR_DIR=str(work / "var"), PYTHONUNBUFFERED="1")
        for key in ("DATABASE_URL", "HARDTESTS_MEDIA_ROOT"):
            env.pop(key, None)
        if args.media_root:
            env["HARDTESTS_MEDIA_ROOT"] = str(Path(args.media_root) / f"n{size}")
        done = subprocess.run([sys.executable, __file__, "--child", *map(str, files)], env=env, cwd=REPO,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        result = json.loads(done.stdout.strip().splitlines()[-1])
        s = result["summary"]
        results.append((size, result))
        print(f"{size:>7} problems ({s['counts'].get('tests_rows', 0)} with kits, {s['counts'].get('tests', 0)} tests, "
              f"{sum(f.stat().st_size for f in files) / 1e6:.0f} MB of {args.format}, written in {written:.0f} s): "
              f"imported in {s['seconds']:.1f} s (validate {s['validate_seconds']:.1f} s) = "
              f"{s['problems_per_second']:.0f} problems/s (CPU: user {result['user_cpu_s']} s, "
              f"system {result['system_cpu_s']} s, load {os.getloadavg()[0]:.1f}); RSS after start-up {result['baseline_rss_mb']} MB, "
              f"peak {result['peak_rss_mb']} MB (+{result['rise_mb']} MB), maxrss {result['maxrss_mb']} MB; "
              f"RSS by tenth of the run: {result['rss_by_tenth_mb']}")
        if not args.keep:
            subprocess.run(["rm", "-rf", str(work.parent)], check=False)
        if args.media_root:
            subprocess.run(["rm", "-rf", str(Path(args.media_root) / f"n{size}")], check=False)
    if len(results) > 1:
        (small, a), (large, b) = results[0], results[-1]
        print(f"memory rise at {large} vs {small} problems: +{b['rise_mb']} MB vs +{a['rise_mb']} MB "
              f"({large // small}x the rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
