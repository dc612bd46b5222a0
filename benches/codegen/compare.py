#!/usr/bin/env python3
"""Side-by-side speed comparison of the tools-codegen CLI with two established generators.

Renders the SDKs of a generated 1,000-tool catalog with:

  * the release `tools-codegen` binary (TypeScript SDK and Python SDK, one process each),
  * `json-schema-to-typescript` (npm, its `json2ts` CLI) for the TypeScript side,
  * `datamodel-code-generator` (PyPI, its `datamodel-codegen` CLI, `typing.TypedDict` output)
    for the Python side,

all in one run on the same machine, and prints each time and the ratios. The other tools take
one JSON Schema, so they get one schema whose properties are every tool's argument and output
schemas: the same types, in one process each, like ours.

Run it by hand from the repository root (CI does not run it):

    python3 benches/codegen/compare.py [--tools 1000] [--rounds 15]

It installs the two generators into ./.tools (node_modules and venv) when missing, builds the
release CLI with cargo, and writes its scratch files into a temporary folder.

Measurement: each language's pair of generators is measured in interleaved rounds, ours then
theirs in every round, so a burst of load on a shared machine hits both sides alike rather than
one side's whole series; the TypeScript pair runs all its rounds, then the Python pair. (Mixing
all four commands into one round put datamodel-codegen's 20-second, memory-heavy run right
before every TypeScript run of ours; on the shared VM this was measured on, a short process
started right after it often spent tens of milliseconds of system time faulting in its first
pages, so our medians measured mostly the previous process.) Each side reports its best and median wall-clock time over the rounds and its
median CPU time (user + system of the process and its threads); the ratios are taken on the
medians, which one lucky or unlucky run cannot move. A warm-up run of each command (not counted)
fills the file cache first.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"


def generate_catalog(count):
    """A catalog of `count` tools with realistic, varied schemas."""
    tools = []
    for i in range(count):
        kind = i % 4
        properties = {
            "path": {"type": "string", "description": f"Path for tool {i}."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
            "mode": {"type": "string", "enum": ["fast", "exact", "fuzzy"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "dryRun": {"type": "boolean", "default": False},
            "filter": {
                "type": "object",
                "properties": {
                    "since": {"type": ["string", "null"], "format": "date-time"},
                    "owner": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["owner"],
                "additionalProperties": False,
            },
        }
        if kind == 1:
            properties["target"] = {
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"], "additionalProperties": False},
                    {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}}, "required": ["kind", "url"], "additionalProperties": False},
                ]
            }
        if kind == 2:
            properties["weights"] = {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
        output = {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "name": {"type": "string"},
                            "score": {"type": ["number", "null"]},
                        },
                        "required": ["id", "name"],
                        "additionalProperties": False,
                    },
                },
                "total": {"type": "integer"},
                "truncated": {"type": "boolean"},
            },
            "required": ["items", "total"],
            "additionalProperties": False,
        }
        tools.append({
            "name": f"tool_{i:04d}",
            "description": f"Tool number {i}: does one thing well.",
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": ["path"],
                "additionalProperties": kind != 3,
            },
            "outputSchema": output,
        })
    return {"tools": tools}


def combined_schema(catalog):
    """One JSON Schema holding every tool's argument and output schema as a property."""
    properties = {}
    for tool in catalog["tools"]:
        stem = "".join(part.capitalize() for part in tool["name"].split("_"))
        properties[f"{stem}Args"] = dict(tool["inputSchema"], title=f"{stem}Args")
        properties[f"{stem}Output"] = dict(tool["outputSchema"], title=f"{stem}Output")
    return {"title": "Catalog", "type": "object", "properties": properties, "additionalProperties": False}


def run(cmd, **kwargs):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)


def ensure_tools():
    json2ts = TOOLS / "node_modules/.bin/json2ts"
    if not json2ts.exists():
        print("installing json-schema-to-typescript into .tools ...", file=sys.stderr)
        run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(TOOLS), "json-schema-to-typescript"])
    venv = TOOLS / "venv"
    if not (venv / "bin/python").exists():
        run([sys.executable, "-m", "venv", str(venv)])
    dmcg = venv / "bin/datamodel-codegen"
    if not dmcg.exists():
        print("installing datamodel-code-generator into .tools/venv ...", file=sys.stderr)
        run([str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", "datamodel-code-generator"])
    return json2ts, dmcg


def build_cli():
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    run(["cargo", "build", "--release", "--quiet", "-p", "tools-codegen"], cwd=ROOT)
    return target / "release/tools-codegen"


class Series:
    """The wall-clock and CPU times of one command over the rounds, in seconds."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.wall = []
        self.cpu = []

    def run_once(self, record=True):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run(self.cmd)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if record:
            self.wall.append(wall)
            self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)

    @property
    def best(self):
        return min(self.wall)

    @property
    def median(self):
        return statistics.median(self.wall)

    @property
    def cpu_median(self):
        return statistics.median(self.cpu)


def npm_version(package):
    manifest = TOOLS / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text())["version"]
    except (OSError, KeyError, ValueError):
        return "?"


def version(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[-1] if text else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds per language; each runs ours and theirs once (default 15)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    json2ts, dmcg = ensure_tools()
    cli = build_cli()
    scratch = Path(tempfile.mkdtemp(prefix="codegen-bench-"))
    try:
        catalog = generate_catalog(args.tools)
        catalog_file = scratch / "catalog.json"
        catalog_file.write_text(json.dumps(catalog))
        schema_file = scratch / "combined.schema.json"
        schema_file.write_text(json.dumps(combined_schema(catalog)))

        ours_ts = Series([str(cli), "sdk", "--lang", "typescript", "--catalog", str(catalog_file), "--out", str(scratch / "ours.ts")])
        ours_py = Series([str(cli), "sdk", "--lang", "python", "--catalog", str(catalog_file), "--out", str(scratch / "ours.py")])
        their_ts = Series([str(json2ts), "--input", str(schema_file), "--output", str(scratch / "json2ts.ts"), "--no-format"])
        their_py = Series([
            str(dmcg), "--input", str(schema_file), "--input-file-type", "jsonschema",
            "--output", str(scratch / "datamodel.py"), "--output-model-type", "typing.TypedDict",
            "--disable-timestamp",
        ])
        for language, pair in (("TypeScript", [ours_ts, their_ts]), ("Python", [ours_py, their_py])):
            for one in pair:
                one.run_once(record=False)
            for round_number in range(args.rounds):
                print(f"\r{language}: round {round_number + 1}/{args.rounds}", end="", file=sys.stderr, flush=True)
                for one in pair:
                    one.run_once()
            print(file=sys.stderr)

        print(f"Catalog: {args.tools} tools ({catalog_file.stat().st_size / 1024:.0f} KiB of JSON); "
              f"{args.rounds} rounds per language, ours and theirs interleaved, one process each")
        print(f"  json-schema-to-typescript {npm_version('json-schema-to-typescript')}, "
              f"node {version(['node', '--version'])}; "
              f"datamodel-code-generator {version([str(dmcg), '--version'])}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        rows = [
            ("TypeScript", "tools-codegen sdk --lang typescript", ours_ts, "json-schema-to-typescript (json2ts --no-format)", their_ts),
            ("Python", "tools-codegen sdk --lang python", ours_py, "datamodel-codegen (typing.TypedDict)", their_py),
        ]
        for language, ours_name, ours, their_name, theirs in rows:
            print(f"{language}:")
            for name, one in ((ours_name, ours), (their_name, theirs)):
                print(f"  {name:<50} best {one.best * 1000:8.1f} ms  median {one.median * 1000:8.1f} ms  "
                      f"CPU (median) {one.cpu_median * 1000:8.1f} ms")
            print(f"  ratio on the medians: tools-codegen is {theirs.median / ours.median:.0f}x faster "
                  f"(wall-clock), {theirs.cpu_median / ours.cpu_median:.0f}x (CPU time); "
                  f"best against best {theirs.best / ours.best:.0f}x")
        both_ours = ours_ts.median + ours_py.median
        both_theirs = their_ts.median + their_py.median
        print(f"Both SDKs (medians): {both_ours * 1000:.1f} ms vs {both_theirs * 1000:.1f} ms: "
              f"{both_theirs / both_ours:.0f}x")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
