"""`ppy check` against mypy --strict and pyright strict on one corpus, in one run.

The corpus (`benchmarks/check_corpus/`) has files with seeded errors, each marked on its
line with `# expect: CODE`, and clean files. For each tool: which seeded errors it
reports (any finding on that line counts), how many findings it makes on the clean
files (false errors), and its wall time cold (its own cache emptied) and warm.
Then the issue's speed targets: the three-error file (`check_speed/three_errors.py`:
NumPy, torch, pydantic, FastAPI) cold and warm for each tool, and `ppy check --strict
examples/` cold and warm. CPU seconds (user + system) are shown beside wall seconds:
on a loaded machine they say what the tool itself costs.

Then the real-code corpus: three unannotated pure-Python libraries from PyPI at pinned
versions, installed with every checker (pinned too) into the benchmark's own venv
(`benchmarks/.venv-checkers`). Each tool's findings in the classes that raise when
their line runs (undefined names, missing modules and names imported, missing module
attributes, attributes an instance lacks, calls whose arguments do not bind) are
matched against `check_real/triage.json`, where each was judged once by hand: a true
bug (the line raises when it runs) or a false report, with the reason.

Last, clean code: sixteen released, tested libraries at pinned versions (their own
venv, `benchmarks/.venv-clean`), each checked as a project of its own, where `ppy
check` must report no error at all: neither in those classes nor of the typed pass
(annotations contradicted, operands Python refuses).

    python benchmarks/checkers.py          # tools that are not installed are skipped
    python benchmarks/checkers.py --real   # the real-code corpus and the clean code
    python benchmarks/checkers.py --clean  # the clean code only
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "check_corpus"
SPEED = HERE / "check_speed"
EXAMPLES = HERE.parent / "examples"
BIN = Path(sys.executable).parent
LINE = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+)(?::\d+)?(?::| -)")


def expected(folder: Path = CORPUS, pattern: str = "seeded_*.py") -> dict[tuple[str, int], str]:
    """(file, line) -> the seeded error's code."""
    found = {}
    for path in sorted(folder.glob(pattern)):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if "# expect:" in text:
                found[(path.name, number)] = text.rpartition("# expect:")[2].strip()
    return found


def _tool(name: str) -> str | None:
    return shutil.which(name, path=str(BIN)) or shutil.which(name)


def commands(
    cache: Path, target: Path = CORPUS, ppy_args: tuple[str, ...] = ()
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each tool's command over `target`, with an environment holding its cache."""
    env = dict(os.environ)
    tools: dict[str, tuple[list[str], dict[str, str]]] = {}
    if ppy := _tool("ppy"):
        argv = [ppy, "check", *ppy_args, str(target)]
        tools["ppy check"] = (argv, {**env, "PPY_CACHE_DIR": str(cache / "ppy")})
    if mypy := _tool("mypy"):
        config = cache / "mypy.ini"  # the pydantic plugin on, as its users run mypy
        config.write_text("[mypy]\nplugins = pydantic.mypy\n")
        argv = [
            mypy,
            "--strict",
            "--config-file",
            str(config),
            "--cache-dir",
            str(cache / "mypy"),
            "--no-error-summary",
            "--show-column-numbers",
            str(target),
        ]
        tools["mypy --strict"] = (argv, env)
    if pyright := _tool("pyright"):
        config = cache / "pyrightconfig.json"
        config.write_text('{"typeCheckingMode": "strict", "pythonVersion": "3.11"}')
        tools["pyright strict"] = ([pyright, "-p", str(config), str(target)], env)
    return tools


def run(argv: list[str], env: dict[str, str], cwd: Path = CORPUS) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the tool and its children, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def findings(output: str, folder: Path = CORPUS) -> set[tuple[str, int]]:
    """(file name, line) of each finding a tool printed."""
    lines = set()
    for text in output.splitlines():
        text = text.strip().replace(str(folder) + "/", "")
        if match := LINE.match(text):
            lines.add((Path(match["path"]).name, int(match["line"])))
    return lines


def corpus_table() -> None:
    seeded = expected()
    print(
        f"corpus: {len(seeded)} seeded errors in {len(list(CORPUS.glob('seeded_*.py')))} files, "
        f"{len(list(CORPUS.glob('clean_*.py')))} clean files"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (argv, env) in commands(Path(tmp), Path(".")).items():
            cold, _, output = run(argv, env)
            warm, _, output = run(argv, env)
            lines = findings(output)
            found = [key for key in seeded if key in lines]
            false = sorted(k for k in lines if k[0].startswith("clean_"))
            rows.append((name, found, false, cold, warm))
    print(f"\n{'tool':16} {'finds':>7} {'false':>6} {'cold s':>8} {'warm s':>8}  missed")
    for name, found, false, cold, warm in rows:
        missed = ", ".join(f"{seeded[k]}@{k[0]}:{k[1]}" for k in seeded if k not in found)
        print(
            f"{name:16} {len(found):>3}/{len(seeded):<3} {len(false):>6} {cold:>8.2f} "
            f"{warm:>8.2f}  {missed or '-'}"
        )


def _best(times: list[tuple[float, float]]) -> tuple[float, float]:
    """The median run's (wall, CPU)."""
    ordered = sorted(times)
    return ordered[len(ordered) // 2]


def speed_table() -> None:
    seeded = expected(SPEED, "three_errors.py")
    print(
        f"\nspeed: {SPEED.name}/three_errors.py ({len(seeded)} seeded errors); "
        "wall s (CPU s), median of the runs"
    )
    print(f"{'tool':16} {'finds':>7} {'cold':>14} {'warm':>14}")
    target = SPEED / "three_errors.py"
    for name in ("ppy check", "mypy --strict", "pyright strict"):
        colds, warms, output = [], [], ""
        rounds = 3 if name == "ppy check" else 1
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                tools = commands(Path(tmp), target)
                if name not in tools:
                    break
                argv, env = tools[name]
                wall, cpu, output = run(argv, env, SPEED)
                colds.append((wall, cpu))
                for _ in range(5 if name == "ppy check" else 1):
                    wall, cpu, output = run(argv, env, SPEED)
                    warms.append((wall, cpu))
        if not colds:
            continue
        lines = findings(output, SPEED)
        found = sum(1 for key in seeded if key in lines)
        (cw, cc), (ww, wc) = _best(colds), _best(warms)
        print(f"{name:16} {found:>3}/{len(seeded):<3} {cw:>7.2f} ({cc:.2f}) {ww:>7.2f} ({wc:.2f})")
    with tempfile.TemporaryDirectory() as tmp:
        tools = commands(Path(tmp), EXAMPLES, ("--strict",))
        if "ppy check" in tools:
            argv, env = tools["ppy check"]
            cold = run(argv, env, EXAMPLES.parent)
            warms = [run(argv, env, EXAMPLES.parent) for _ in range(5)]
            last = warms[-1][2].strip().splitlines()[-1]
            (ww, wc) = _best([(w, c) for w, c, _ in warms])
            print(
                f"\nppy check --strict examples/: cold {cold[0]:.2f} s ({cold[1]:.2f}), "
                f"warm {ww:.2f} s ({wc:.2f}); {last}"
            )


# -- the real-code corpus ----------------------------------------------------------------
REAL = HERE / "check_real"
VENV = HERE / ".venv-checkers"
#: (distribution, version, what it installs that is checked, relative to site-packages)
LIBRARIES = (
    ("configobj", "5.0.6", ("configobj.py", "validate.py")),
    ("xlrd", "1.2.0", ("xlrd",)),
    ("pyfiglet", "0.8.post1", ("pyfiglet",)),
)
#: what the speed row adds to the corpus: about 70 files, as a mid-sized project
SPEED_LIBRARIES = (
    ("html5lib", "1.1", ("html5lib",)),
    ("python-dateutil", "2.9.0.post0", ("dateutil",)),
)
#: cold and warm runs of each tool on the speed row
SPEED_ROUNDS = 3
TOOLS = ("mypy==2.4.1", "pyright==1.1.414", "pyrefly==1.5.0", "ty==0.0.108")
#: each tool's rules (codes) in the classes of errors that raise when their line runs
RULES = {
    "ppy check": re.compile(r"\[E102[0-5]\]"),
    "mypy": re.compile(r"\[(name-defined|attr-defined|call-arg|import-not-found|import)\]"),
    "pyright": re.compile(
        r"\((reportUndefinedVariable|reportAttributeAccessIssue|reportCallIssue"
        r"|reportMissingImports|reportUnsupportedDunderAll)\)"
    ),
    "pyrefly": re.compile(
        r"\[(unknown-name|missing-import|import-error|missing-attribute|missing-module-attribute"
        r"|unexpected-keyword|bad-argument-count|missing-argument)\]"
    ),
    "ty": re.compile(
        r"\[(unresolved-reference|unresolved-import|unresolved-attribute|missing-attribute"
        r"|missing-module-member|unknown-argument|missing-argument|too-many-positional-arguments"
        r"|parameter-already-assigned|invalid-dunder-all)\]"
    ),
}
#: findings of those rules outside the classes: a None operand (Optional narrowing),
#: argument types no overload takes (not their number or names)
EXCLUDE = {
    "mypy": re.compile(r'"None" has no attribute'),
    "pyright": re.compile(
        r"No overloads for|cannot be assigned to|is not a known attribute of \"None\""
    ),
}
_WHERE = re.compile(r"(?P<path>[^:\s]+\.py):(?P<line>\d+)")


def real_venv() -> Path:
    """The benchmark's venv with the checkers and the libraries at their versions."""
    every = [*LIBRARIES, *SPEED_LIBRARIES]
    return _venv(VENV, [*TOOLS, *(f"{d}=={v}" for d, v, _ in every)])


def _venv(folder: Path, requirements: list[str]) -> Path:
    """`folder`'s python, the venv made and `requirements` installed when they changed."""
    python = folder / "bin" / "python"
    marker = folder / ".installed"
    wanted = " ".join(requirements)
    if not marker.is_file() or marker.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", *requirements]
        subprocess.run(pip, check=True)
        marker.write_text(wanted)
    return python


def site_packages(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.check_output([str(python), "-c", code], text=True).strip())


def real_commands(
    python: Path, targets: list[str], cache: Path
) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = dict(os.environ)
    (cache / "ppy").mkdir(parents=True, exist_ok=True)
    bin_ = python.parent
    tools: dict[str, tuple[list[str], dict[str, str]]] = {}
    if ppy := _tool("ppy"):
        tools["ppy check"] = (
            [ppy, "check", *targets],
            {**env, "PPY_CACHE_DIR": str(cache / "ppy")},
        )
    mypy = [str(bin_ / "mypy"), "--check-untyped-defs", "--cache-dir", str(cache / "mypy")]
    mypy += ["--no-error-summary", "--show-column-numbers", "--python-executable", str(python)]
    tools["mypy"] = ([*mypy, *targets], env)
    tools["pyright"] = ([str(bin_ / "pyright"), "--pythonpath", str(python), *targets], env)
    pyrefly = [str(bin_ / "pyrefly"), "check", "--check-unannotated-defs", "true"]
    pyrefly += ["--python-interpreter-path", str(python)]
    tools["pyrefly"] = ([*pyrefly, *targets], env)
    ty = [str(bin_ / "ty"), "check", "--output-format", "concise", "--python", str(VENV)]
    tools["ty"] = ([*ty, *targets], env)
    return {k: v for k, v in tools.items() if Path(v[0][0]).is_file()}


def real_findings(tool: str, output: str, root: Path) -> set[tuple[str, int]]:
    """(path relative to `root`, line) of each error in the classes of RULES. pyright
    continues a message on indented lines; pyrefly puts its place on the line after."""
    records: list[list[str]] = []  # [message, place]
    message = ""
    for text in output.splitlines():
        where = _WHERE.search(text)
        if tool == "pyrefly":
            if text.startswith(("ERROR", "WARN", "INFO")):
                message = text
            elif where and text.strip().startswith("-->"):
                records.append([message, text])
        elif where and not text.startswith("    "):
            records.append([text, text])
        elif records and text.startswith("    "):
            records[-1][0] += " " + text.strip()
    found: set[tuple[str, int]] = set()
    for message, place in records:
        if not RULES[tool].search(message) or "error" not in message.lower():
            continue
        if tool in EXCLUDE and EXCLUDE[tool].search(message):
            continue
        where = _WHERE.search(place)
        assert where is not None
        path = Path(where["path"])
        path = path if path.is_absolute() else root / path  # (relative to the cwd, root)
        if path.is_relative_to(root):
            found.add((path.relative_to(root).as_posix(), int(where["line"])))
    return found


def real_table() -> None:
    """Each tool over a copy of the libraries in a folder of their own (pyright reports
    nothing in files under site-packages: it takes them for a library's)."""
    python = real_venv()
    installed = site_packages(python)
    triage = json.loads((REAL / "triage.json").read_text())["findings"]
    bugs = {k for k, v in triage.items() if v["verdict"] == "bug"}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "real"
        targets = _copy(installed, LIBRARIES, root)
        files = len(list(root.rglob("*.py")))
        listed = ", ".join(f"{d} {v}" for d, v, _ in LIBRARIES)
        print(f"\nreal code: {listed} ({files} files)")
        for name, (argv, env) in real_commands(python, targets, Path(tmp) / "cache").items():
            cold, _, output = run(argv, env, root)
            warm, _, output = run(argv, env, root)
            keys = {f"{p}:{n}" for p, n in real_findings(name, output, root)}
            untriaged = sorted(keys - triage.keys())
            true = keys & bugs
            false = keys - bugs - set(untriaged)
            rows.append((name, true, false, untriaged, cold, warm))
    print(f"{'tool':10} {'bugs':>7} {'false':>6} {'cold s':>7} {'warm s':>7}  untriaged")
    for name, true, false, untriaged, cold, warm in rows:
        print(
            f"{name:10} {len(true):>3}/{len(bugs):<3} {len(false):>6} {cold:>7.2f} {warm:>7.2f}"
            f"  {', '.join(untriaged) or '-'}"
        )
    for name, true, _, _, _, _ in rows:
        print(f"  {name} misses: {', '.join(sorted(bugs - true)) or '-'}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "real"
        targets = _copy(installed, (*LIBRARIES, *SPEED_LIBRARIES), root)
        files = len(list(root.rglob("*.py")))
        listed = ", ".join(f"{d} {v}" for d, v, _ in (*LIBRARIES, *SPEED_LIBRARIES))
        print(
            f"\nspeed on {files} files ({listed}): wall s (CPU s), cold then warm, the "
            f"median of {SPEED_ROUNDS} rounds taken in turn (pyright: one)"
        )
        times: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]] = {}
        for round_ in range(SPEED_ROUNDS):  # (in turn: the machine's load falls on all)
            cache = Path(tmp) / f"cache-{round_}"  # each round cold: caches empty
            for name, (argv, env) in real_commands(python, targets, cache).items():
                if round_ and name == "pyright":
                    continue  # ~30 s a run
                colds, warms = times.setdefault(name, ([], []))
                colds.append(run(argv, env, root)[:2])
                warms.append(run(argv, env, root)[:2])
        for name, (colds, warms) in times.items():
            (cw, cc), (ww, wc) = _best(colds), _best(warms)
            print(f"{name:10} {cw:>6.2f} ({cc:.2f}) {ww:>6.2f} ({wc:.2f})")


#: clean code: (distribution, version, what it installs that is checked)
CLEAN = (
    ("click", "8.5.1", ("click",)),
    ("jinja2", "3.1.6", ("jinja2",)),
    ("idna", "3.20", ("idna",)),
    ("attrs", "26.1.0", ("attr", "attrs")),
    ("h11", "0.16.0", ("h11",)),
    ("filelock", "4.3.1", ("filelock",)),
    ("anyio", "4.16.0", ("anyio",)),
    ("iniconfig", "2.3.1", ("iniconfig",)),
    ("colorama", "0.4.6", ("colorama",)),
    ("humanize", "4.17.0", ("humanize",)),
    ("certifi", "2026.10.19.post1", ("certifi",)),
    ("annotated-types", "0.8.0", ("annotated_types",)),
    ("pytest", "9.2.0", ("_pytest", "pytest")),
    ("jsonschema", "4.26.0", ("jsonschema",)),
    ("babel", "2.19.0", ("babel",)),
    ("hypothesis", "6.170.17", ("hypothesis",)),
)
CLEAN_VENV = HERE / ".venv-clean"


#: any error ppy check reports (its notes aside): on clean code, each is a false one
_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+):\d+: error: .*\[(?P<code>E\d+)\]$")


def clean_table() -> None:
    """`ppy check` over each clean library as a project of its own: every error it
    reports there is a false one, the typed pass's (annotations) as well as the
    classes that raise at run time."""
    ppy = _tool("ppy")
    if ppy is None:
        return
    installed = site_packages(_venv(CLEAN_VENV, [f"{d}=={v}" for d, v, _ in CLEAN]))
    total_files, reports, raising = 0, [], 0
    print("\nclean code: false reports of ppy check (every error; the run-time classes)")
    with tempfile.TemporaryDirectory() as tmp:
        for distribution, version, names in CLEAN:
            root = Path(tmp) / distribution
            targets = _copy(installed, ((distribution, version, names),), root)
            env = {**os.environ, "PPY_CACHE_DIR": str(Path(tmp) / "cache")}
            _, _, output = run([ppy, "check", *targets], env, root)
            errors = _clean_errors(output, root)
            found = real_findings("ppy check", output, root)
            files = len(list(root.rglob("*.py")))
            total_files += files
            raising += len(found)
            reports += [f"{distribution}/{e}" for e in errors]
            print(
                f"  {distribution} {version}: {files} files, {len(errors)} false errors"
                f" ({len(found)} in the run-time classes)"
            )
    print(
        f"clean code: {len(reports)} false errors ({raising} in the run-time classes)"
        f" in {total_files} files, {len(CLEAN)} libraries"
    )
    for report in reports:
        print(f"  {report}")


def _clean_errors(output: str, root: Path) -> list[str]:
    """`path:line [code] message` of every error line ppy check printed."""
    errors = []
    for text in output.splitlines():
        if match := _ERROR.match(text):
            path = Path(match["path"])
            path = path.relative_to(root) if path.is_relative_to(root) else path
            message = text.split(": error: ", 1)[1]
            errors.append(f"{path.as_posix()}:{match['line']} {message}")
    return errors


def _copy(
    installed: Path, libraries: tuple[tuple[str, str, tuple[str, ...]], ...], root: Path
) -> list[str]:
    """The libraries' files copied under `root`; the names to check there."""
    root.mkdir()
    targets = []
    for _, _, names in libraries:
        for name in names:
            source = installed / name
            if source.is_dir():
                shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("*.pyc"))
            else:
                shutil.copy2(source, root / name)
            targets.append(name)
    return targets


def main() -> None:
    if "--real" not in sys.argv and "--clean" not in sys.argv:
        corpus_table()
        speed_table()
    if "--clean" not in sys.argv:
        real_table()
    clean_table()
    print(f"\nload average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
