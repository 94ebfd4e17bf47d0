#!/usr/bin/env bash
# Lints KernelArc: clang-format on the changed files, clang-tidy on the engine's sources.
#
#   tools/lint.sh                     both checks (what CI runs)
#   tools/lint.sh --format-only       only the clang-format check
#   tools/lint.sh --tidy-only         only clang-tidy
#   tools/lint.sh --base REV          format-check the files changed since REV
#   tools/lint.sh --fix               format the changed files in place instead of failing
#   tools/lint.sh --update-baseline   run clang-tidy and rewrite tools/clang-tidy-baseline.txt
#   tools/lint.sh --tidy-only FILE.cc...   clang-tidy on these sources only (a quick look)
#
# Format check: the C++ files (*.cc, *.h) changed between the base and the work tree (untracked
# ones too) must equal clang-format-14's output under .clang-format; a diff is printed for each
# that does not. The base is `git merge-base HEAD origin/main` (else `main`) when that branch
# exists and HEAD is not on it, else HEAD's parent: in CI, a clone of main, the last commit.
# Whole files are checked, so the first change to a file formatted before .clang-format
# existed formats it (`--fix`). Not checked: problems/ and tests/data/ (kernel and candidate
# sources that the engine compiles at run time; many keep a hand layout), anything untracked
# under a build folder, generated code (never tracked).
#
# clang-tidy: every *.cc that git tracks outside tests/ and problems/ and that the build's
# compile_commands.json compiles (so modules are found by the build, not listed here), with
# the root .clang-tidy, `nproc` files at a time. Findings in files git tracks are keyed by
# (file, check, message), without line or column, so moving code changes nothing; a finding
# whose key occurs more often than in tools/clang-tidy-baseline.txt is new and fails the run.
# Baseline findings that no longer occur are listed as a hint; `--update-baseline` drops them.
# The build folder (BUILD_DIR, default build/) is configured if needed, and only its generated
# headers (*_generated.h) are built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
baseline=$root/tools/clang-tidy-baseline.txt
base=
only=()
do_format=1
do_tidy=1
fix=0
update=0
while (($#)); do
  case $1 in
    --base) base=${2:?--base needs a revision}; shift ;;
    --format-only) do_tidy=0 ;;
    --tidy-only) do_format=0 ;;
    --fix) fix=1 do_tidy=0 ;;
    --update-baseline) update=1 do_format=0 do_tidy=1 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "lint: unknown argument '$1' (see tools/lint.sh --help)" >&2; exit 2 ;;
    *) only+=("$(realpath --relative-to="$root" "$1")") ;;
  esac
  shift
done
cd "$root"
if ((${#only[@]})) && ((update || do_format)); then
  echo "lint: files are for --tidy-only; --update-baseline analyses every source" >&2
  exit 2
fi
bash "$root/tools/setup.sh" lint
clang_format=clang-format-14
clang_tidy=clang-tidy-14
status=0

# ---- clang-format on the changed files ----------------------------------------------------
if ((do_format)); then
  if [ -z "$base" ]; then
    for ref in origin/main main; do
      if git rev-parse -q --verify "$ref" >/dev/null &&
         [ "$(git merge-base HEAD "$ref")" != "$(git rev-parse HEAD)" ]; then
        base=$(git merge-base HEAD "$ref")
        break
      fi
    done
    if [ -n "$base" ]; then
      :
    elif git rev-parse -q --verify HEAD~1 >/dev/null; then
      base=HEAD~1
    else
      base=$(git hash-object -t tree /dev/null)  # a first commit: every file is new
    fi
  fi
  mapfile -t changed < <(
    { git diff --name-only --diff-filter=ACMR "$base" -- '*.cc' '*.h'
      git ls-files --others --exclude-standard -- '*.cc' '*.h'; } |
      grep -Ev '^(problems|tests/data)/' | LC_ALL=C sort -u || true)
  unformatted=()
  for f in "${changed[@]}"; do
    [ -f "$f" ] || continue
    if ((fix)); then
      "$clang_format" -i --style=file "$f"
    elif ! "$clang_format" --style=file "$f" | diff -u --label "a/$f" --label "b/$f" "$f" -; then
      unformatted+=("$f")
    fi
  done
  if ((fix)); then
    echo "lint: formatted ${#changed[@]} changed file(s) since $(git rev-parse --short "$base")"
  elif ((${#unformatted[@]})); then
    echo "lint: ${#unformatted[@]} of ${#changed[@]} changed file(s) not formatted" \
      "(diff above; \`tools/lint.sh --fix\` formats them): ${unformatted[*]}"
    status=1
  else
    echo "lint: format ok (${#changed[@]} changed file(s) since $(git rev-parse --short "$base"))"
  fi
fi

# ---- clang-tidy on the engine's sources, against the baseline -----------------------------
if ((do_tidy)); then
  cmake -S "$root" -B "$build" -G Ninja >/dev/null
  mapfile -t generated < <(ninja -C "$build" -t targets all | sed -n 's/^\([^:]*_generated\.h\): .*/\1/p')
  if ((${#generated[@]})); then
    ninja -C "$build" "${generated[@]}" >/dev/null
  fi
  # The engine's sources: tracked, outside tests/ and problems/, compiled by the build.
  mapfile -t sources < <(
    python3 - "$build/compile_commands.json" "$root" <<'EOF' | LC_ALL=C sort |
import json, os, sys
for entry in json.load(open(sys.argv[1])):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    print(os.path.relpath(path, sys.argv[2]))
EOF
      LC_ALL=C comm -12 - <(git ls-files -- '*.cc' | grep -Ev '^(tests|problems)/' | LC_ALL=C sort))
  if ((${#only[@]})); then
    mapfile -t sources < <(LC_ALL=C comm -12 <(printf '%s\n' "${sources[@]}") \
      <(printf '%s\n' "${only[@]}" | LC_ALL=C sort -u))
  fi
  if ((${#sources[@]} == 0)); then
    echo "lint: no engine sources in $build/compile_commands.json" >&2
    exit 1
  fi
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  echo "lint: clang-tidy on ${#sources[@]} files, $(nproc) at a time"
  start=$SECONDS
  # One log per file. clang-tidy exits non-zero only when it could not analyse the file (a
  # compile error under clang, a crash): that fails the run, since its findings are unknown.
  printf '%s\n' "${sources[@]}" |
    xargs -P "$(nproc)" -I{} sh -c \
      'log=$2/$(echo "$1" | tr / _).log
       "$3" -p "$4" --quiet "$1" >"$log" 2>"$log.err" || echo "$1" >"$log.failed"' \
      _ {} "$out" "$clang_tidy" "$build"
  echo "lint: clang-tidy took $((SECONDS - start)) s"
  if compgen -G "$out/*.failed" >/dev/null; then
    for failed in "$out"/*.failed; do
      echo "lint: clang-tidy could not analyse $(cat "$failed"):"
      { grep -h "error:" "${failed%.failed}"; tail -n 5 "${failed%.failed}.err"; } | head -20
    done
    exit 1
  fi
  # "path:line:col: warning: message [check]" -> "path<TAB>check<TAB>message", one line per
  # distinct location (a header's finding is reported by every file that includes it), only
  # for files git tracks (not system headers, not generated code).
  git ls-files >"$out/tracked"
  python3 - "$root" "$out" >"$out/current" <<'EOF'
import glob, os, re, sys
root, out = sys.argv[1], sys.argv[2]
tracked = set(open(os.path.join(out, "tracked")).read().split("\n"))
diag = re.compile(r"^(.+?):(\d+):(\d+): (?:warning|error): (.*) \[([\w.,-]+)\]$")
seen = {}
for log in glob.glob(os.path.join(out, "*.log")):
    for line in open(log, errors="replace"):
        m = diag.match(line.rstrip("\n"))
        if not m:
            continue
        path = os.path.relpath(os.path.normpath(m.group(1)), root)
        if path not in tracked:
            continue
        msg = m.group(4).replace(root + "/", "")  # keys must not depend on the clone's folder
        seen[(path, int(m.group(2)), int(m.group(3)), m.group(5), msg)] = True
for path, line, col, check, msg in sorted(seen):
    print(f"{path}\t{check}\t{msg}\t{line}:{col}")
EOF
  cut -f1-3 "$out/current" | LC_ALL=C sort >"$out/keys"
  if ((update)); then
    {
      echo "# Known clang-tidy findings: file<TAB>check<TAB>message, one line per occurrence, sorted."
      echo "# Regenerate with tools/lint.sh --update-baseline (never by hand)."
      cat "$out/keys"
    } >"$baseline"
    echo "lint: wrote $(wc -l <"$out/keys") findings to ${baseline#"$root"/}:"
    cut -f2 "$out/keys" | LC_ALL=C sort | uniq -c | sort -rn
    exit $status
  fi
  [ -f "$baseline" ] || : >"$baseline"
  grep -v '^#' "$baseline" | LC_ALL=C sort >"$out/known" || true
  # Multiset differences: a key seen more often than the baseline has it is new.
  LC_ALL=C comm -23 "$out/keys" "$out/known" >"$out/new"
  LC_ALL=C comm -13 "$out/keys" "$out/known" >"$out/gone"
  if [ -s "$out/gone" ] && ((${#only[@]} == 0)); then
    echo "lint: hint: $(wc -l <"$out/gone") baseline finding(s) no longer occur;" \
      "tools/lint.sh --update-baseline drops them:"
    sed 's/^/  /' "$out/gone"
  fi
  if [ -s "$out/new" ]; then
    echo "lint: $(wc -l <"$out/new") new clang-tidy finding(s) (not in ${baseline#"$root"/}):"
    # Every location of each new key, since which of them is the new one is unknowable.
    awk -F'\t' 'NR==FNR {new[$1 FS $2 FS $3]=1; next}
                ($1 FS $2 FS $3) in new {printf "  %s:%s: %s [%s]\n", $1, $4, $3, $2}' \
      "$out/new" "$out/current"
    echo "lint: fix them, or add NOLINT(check) with a reason where the check is wrong"
    status=1
  else
    echo "lint: clang-tidy ok ($(wc -l <"$out/keys") findings, all in the baseline)"
  fi
fi
exit $status
