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

    python3 benches/codegen/compare.py [--tools 1000] [--runs 5]

It installs the two generators into ./.tools (node_modules and venv) when missing, builds the
release CLI with cargo, and writes its scratch files into a temporary folder.
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


def best_of(runs, cmd):
    """The fastest and the median wall-clock time of `runs` runs of `cmd`, and the least CPU
    time (user + system, all threads) of a run, in seconds."""
    times = []
    cpu = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run(cmd)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times), statistics.median(times), min(cpu)


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
    parser.add_argument("--runs", type=int, default=5, help="runs of tools-codegen (the others get max(2, runs // 2))")
    args = parser.parse_args()

    json2ts, dmcg = ensure_tools()
    cli = build_cli()
    scratch = Path(tempfile.mkdtemp(prefix="codegen-bench-"))
    try:
        catalog = generate_catalog(args.tools)
        catalog_file = scratch / "catalog.json"
        catalog_file.write_text(json.dumps(catalog))
        schema_file = scratch / "combined.schema.json"
        schema_file.write_text(json.dumps(combined_schema(catalog)))
        other_runs = max(2, args.runs // 2)

        ours_ts = best_of(args.runs, [str(cli), "sdk", "--lang", "typescript", "--catalog", str(catalog_file), "--out", str(scratch / "ours.ts")])
        ours_py = best_of(args.runs, [str(cli), "sdk", "--lang", "python", "--catalog", str(catalog_file), "--out", str(scratch / "ours.py")])
        their_ts = best_of(other_runs, [str(json2ts), "--input", str(schema_file), "--output", str(scratch / "json2ts.ts"), "--no-format"])
        their_py = best_of(other_runs, [
            str(dmcg), "--input", str(schema_file), "--input-file-type", "jsonschema",
            "--output", str(scratch / "datamodel.py"), "--output-model-type", "typing.TypedDict",
            "--disable-timestamp",
        ])

        print(f"Catalog: {args.tools} tools ({catalog_file.stat().st_size / 1024:.0f} KiB of JSON); "
              f"per process: best wall-clock of {args.runs} / {other_runs} runs, the median, and the least CPU time")
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
            print(f"  {ours_name:<50} {ours[0] * 1000:10.1f} ms  (median {ours[1] * 1000:.1f} ms, CPU {ours[2] * 1000:.1f} ms)")
            print(f"  {their_name:<50} {theirs[0] * 1000:10.1f} ms  (median {theirs[1] * 1000:.1f} ms, CPU {theirs[2] * 1000:.1f} ms)")
            print(f"  ratio: tools-codegen is {theirs[0] / ours[0]:.0f}x faster (best wall-clock), "
                  f"{theirs[1] / ours[1]:.0f}x (median), {theirs[2] / ours[2]:.0f}x (CPU time)")
        both_ours = ours_ts[0] + ours_py[0]
        both_theirs = their_ts[0] + their_py[0]
        print(f"Both SDKs: {both_ours * 1000:.1f} ms vs {both_theirs * 1000:.1f} ms: {both_theirs / both_ours:.0f}x")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
