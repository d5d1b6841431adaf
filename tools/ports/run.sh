#!/usr/bin/env bash
# Latchkey ports harness: builds twelve Swift libraries that use Apple's Security — the five most used keychain
# wrappers against LatchkeySecurity, seven that go beyond them against the Security product with their
# `import Security` unchanged (IMPORT_SECURITY) — and runs their own XCTest suites, changing nothing in their
# sources but import lines (and, in the patch mode, what a documented patch says).
#
#   ./run.sh                       # every library, modes strict, asis, shims and patch (where files exist)
#   ./run.sh KeychainAccess Valet  # only these
#   LATCHKEY_PATH=/path/to/latchkey ./run.sh KeychainAccess
#   ./run.sh --report              # only rewrite REPORT.md's generated section from results/*.json
#
# Environment:
#   LATCHKEY_PATH     the Latchkey package to build against (default: a private clone of $LATCHKEY_ORIGIN in
#                     .latchkey beside this script, made on first use; UPDATE_LATCHKEY=1 pulls it first)
#   LATCHKEY_ORIGIN   where that clone comes from (default: the repository this script is in)
#   MIRROR_DIR        where the libraries' git mirrors are (<owner>+<name>/repo, default /work/.mirror)
#   MODES             space-separated, any of: strict asis shims patch  (default: all four, in that order)
#                       asis   - import rewrite only (see below)
#                       shims  - as asis, plus the stub declarations in shims/<name>/*.swift compiled as a
#                                separate module LatchkeyShims that the library and test targets import
#                                implicitly (-Xfrontend -import-module); only the compile errors they answer
#                                are stubbed, to learn which tests fail after that. A module the library
#                                names (`CryptoKit.AES`) is shims/<name>/modules/<Module>/*.swift, a target
#                                of that name it depends on (its `import` then compiles)
#                       patch  - as shims, plus the source patch patches/<name>.sh for what no shim can
#                                answer (Valet's `@objc`, which cannot compile on Linux; a Foundation gap in
#                                one SimpleKeychain test). NOT an import-only port: labelled "shims+patch".
#                       strict - only `import Security` -> `import LatchkeySecurity`, no added imports
#                                (shows what Apple's implicit Foundation -> Security re-export hides)
#   TEST_TIMEOUT      seconds for one `swift test` invocation (default 900)
#   PKG_DIR, RESULTS_DIR, REPORT_FILE, SRC_DIR
#                     where packages, results, the report and the checked-out sources go (defaults
#                     pkg/, results/, REPORT.md, src/ beside this script) — e.g. to try a Latchkey branch
#                     without touching the main results
#   JOBS              swift build -j (default 2)
#
# Source rewriting (the only changes made to the libraries):
#   1. `import Security` -> `import LatchkeySecurity` (attributes such as @preconcurrency kept); kept as it is
#      for the IMPORT_SECURITY libraries, whose rule 2 adds `import Security`.
#   2. (all modes but strict) A file that uses Security names (kSec…, errSec…, Sec…, CF…, OSStatus, noErr) but imports
#      only Foundation / XCTest (which on Apple platforms re-export Security) gets `import LatchkeySecurity`
#      added right after that import line.
#   3. `import LocalAuthentication`, `UIKit`, `CommonCrypto`, `CryptoKit`, … (Apple-only modules) are wrapped in
#      `#if canImport(…)`; what a library needs of them comes from its shims, never from Latchkey.
# Test data read beside the test sources (TEST_DATA) is copied with them, bundle resources (BUNDLE_RESOURCES)
# next to the test binary, where swift-corelibs-foundation's main bundle looks. Library files built on a UI
# framework no test uses are left out (LIB_EXCLUDE), and where SwiftPM's test discovery on Linux cannot list a
# suite (tests inherited from a generic XCTestCase), entrypoints/<name>.swift is its Tests/LinuxMain.swift.
# Every rewrite is listed in results/<name>.log.
#
# Test environment (the Linux stand-in for an Apple test host app):
#   - a fresh keychain file per library and mode ($RESULTS/work/<name>/<mode>.keychain), created on first use
#     with LATCHKEY_PASSPHRASE; no agent (LATCHKEY_AGENT_SOCKET points to a socket that does not exist, in a
#     0700 directory);
#   - LATCHKEY_APPLICATION_ID and LATCHKEY_ACCESS_GROUPS = the test host's application identifier and
#     keychain-access-groups entitlement from the library's Xcode project;
#   - an Info.plist with the test host's CFBundleIdentifier next to the .xctest binary, so that
#     Bundle.main.bundleIdentifier is not nil (on Apple the test host app provides it).
#
# Output: results/<name>.log (everything), results/<name>.<mode>.json (parsed), and the generated section of
# REPORT.md between the BEGIN/END GENERATED markers (the hand-written analysis around it is kept).
set -uo pipefail

PORTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="${SRC_DIR:-$PORTS/src}"
PKG="${PKG_DIR:-$PORTS/pkg}"
SHIMS="$PORTS/shims"
PATCHES="$PORTS/patches"
RESULTS="${RESULTS_DIR:-$PORTS/results}"
REPORT="${REPORT_FILE:-$PORTS/REPORT.md}"
LATCHKEY_ORIGIN="${LATCHKEY_ORIGIN:-$(cd "$PORTS/../.." && pwd)}"
MIRROR_DIR="${MIRROR_DIR:-/work/.mirror}"
DEFAULT_LATCHKEY="$PORTS/.latchkey"
export LATCHKEY_PATH="${LATCHKEY_PATH:-$DEFAULT_LATCHKEY}"
MODES="${MODES:-strict asis shims patch}"
TEST_TIMEOUT="${TEST_TIMEOUT:-900}"
JOBS="${JOBS:-2}"

ALL_LIBS=(keychain-swift SwiftKeychainWrapper SimpleKeychain KeychainAccess Valet
          SwiftyRSA CertificateSigningRequest JWTSwift Heimdall EllipticCurveKeyPair
          JOSESwift SwiftyKeychainKit)
# Round three (issue 32): Security beyond passwords, built with `import Security` unchanged against the
# `Security` product (the rest against `LatchkeySecurity`, their import rewritten).
# Round four (issue 55): JOSESwift (RSA and EC keys from JWKs, SecKeyCopyAttributes casts) and SwiftyKeychainKit
# (result dictionaries read with `as! CFNumber`, `as! CFString`, `as! Bool`), also with `import Security` kept.
declare -A IMPORT_SECURITY=(
  [SwiftyRSA]=1 [CertificateSigningRequest]=1 [JWTSwift]=1 [Heimdall]=1 [EllipticCurveKeyPair]=1
  [JOSESwift]=1 [SwiftyKeychainKit]=1
)
declare -A REPO=(
  [keychain-swift]=evgenyneu/keychain-swift
  [SwiftKeychainWrapper]=jrendel/SwiftKeychainWrapper
  [SimpleKeychain]=auth0/SimpleKeychain
  [KeychainAccess]=kishikawakatsumi/KeychainAccess
  [Valet]=square/Valet
  [SwiftyRSA]=TakeScoop/SwiftyRSA
  [CertificateSigningRequest]=cbaker6/CertificateSigningRequest
  [JWTSwift]=Alpha-Coders/JWTSwift
  [Heimdall]=henrinormak/Heimdall
  [EllipticCurveKeyPair]=agens-no/EllipticCurveKeyPair
  [JOSESwift]=airsidemobile/JOSESwift
  [SwiftyKeychainKit]=andriyslyusar/SwiftyKeychainKit
)
declare -A MODULE=(
  [keychain-swift]=KeychainSwift [SwiftKeychainWrapper]=SwiftKeychainWrapper [SimpleKeychain]=SimpleKeychain
  [KeychainAccess]=KeychainAccess [Valet]=Valet
  [SwiftyRSA]=SwiftyRSA [CertificateSigningRequest]=CertificateSigningRequest [JWTSwift]=JWTSwift [Heimdall]=Heimdall
  [EllipticCurveKeyPair]=EllipticCurveKeyPair [JOSESwift]=JOSESwift [SwiftyKeychainKit]=SwiftyKeychainKit
)
# Library sources and test sources inside the checkout (every *.swift file below them is copied).
declare -A LIB_DIR=(
  [keychain-swift]=Sources [SwiftKeychainWrapper]=SwiftKeychainWrapper [SimpleKeychain]=SimpleKeychain
  [KeychainAccess]=Lib/KeychainAccess [Valet]=Sources/Valet
  [SwiftyRSA]=Source [CertificateSigningRequest]=Sources/CertificateSigningRequest [JWTSwift]=Sources/JWTSwift
  [Heimdall]=Heimdall [EllipticCurveKeyPair]=Sources [JOSESwift]=JOSESwift/Sources [SwiftyKeychainKit]=Sources
)
declare -A TEST_DIR=(
  [keychain-swift]=Tests/KeychainSwiftTests [SwiftKeychainWrapper]=SwiftKeychainWrapperTests
  [SimpleKeychain]=SimpleKeychainTests [KeychainAccess]=Lib/KeychainAccessTests [Valet]=Tests
  [SwiftyRSA]=Tests [CertificateSigningRequest]=Tests/CertificateSigningRequestTests [JWTSwift]=Tests/JWTTests
  [Heimdall]=HeimdallTests [EllipticCurveKeyPair]=Tests/EllipticCurveKeyPairTests [JOSESwift]=Tests
  [SwiftyKeychainKit]=Tests/Sources
)
# Test data read by a path relative to the test sources (#file), copied beside them (relative to TEST_DIR).
declare -A TEST_DATA=(
  [JWTSwift]="Samples"
)
# Test resources read from the test bundle (Bundle(for:), Bundle.main): copied next to the .xctest binary,
# where swift-corelibs-foundation's main bundle looks (relative to the checkout; space-separated globs).
declare -A BUNDLE_RESOURCES=(
  [SwiftyRSA]="Tests/keys/*" [JOSESwift]="Tests/TestKeys.plist"
)
# Library files left out, relative to the library directory (space-separated): a file built on a UI framework
# Linux has no counterpart for, which no test uses. Each is explained in REPORT.md.
declare -A LIB_EXCLUDE=(
  [SwiftyKeychainKit]="AppKeychainStorage.swift"
)
# Files left out, relative to the test directory (space-separated). Each is explained in REPORT.md.
declare -A TEST_EXCLUDE=(
  [KeychainAccess]="SharedCredentialTests.swift"
  [JWTSwift]="XCTestManifests.swift"
)
# The test host each suite runs in on Apple platforms: bundle identifier, application identifier (default
# access group) and keychain-access-groups entitlement, from each project's Xcode settings.
declare -A BUNDLE_ID=(
  [keychain-swift]=com.marketplacer.KeychainSwiftDemo
  [SwiftKeychainWrapper]=com.jasonrendel.TestHostApp
  [SimpleKeychain]=com.auth0.simplekeychain
  [KeychainAccess]=com.kishikawakatsumi.KeychainAccess.TestHost
  [Valet]=com.squareup.Valet-iOS-Test-Host-App
  [SwiftyRSA]=com.scoop.SwiftyRSA [CertificateSigningRequest]=com.cbaker6.CertificateSigningRequest
  [JWTSwift]=com.alpha-coders.JWTSwift [Heimdall]=com.henrinormak.Heimdall [EllipticCurveKeyPair]=no.agens.EllipticCurveKeyPair
  [JOSESwift]=com.airsidemobile.Tests [SwiftyKeychainKit]=com.swifty.keychain.tests.host.TestsHost
)
declare -A APP_ID=(
  [keychain-swift]=com.marketplacer.KeychainSwiftDemo
  [SwiftKeychainWrapper]=com.jasonrendel.TestHostApp
  [SimpleKeychain]=com.auth0.simplekeychain
  [KeychainAccess]=27AEDK3C9F.com.kishikawakatsumi.KeychainAccess.TestHost
  [Valet]=9XUJ7M53NG.com.squareup.Valet-iOS-Test-Host-App
  [SwiftyRSA]=com.scoop.SwiftyRSA [CertificateSigningRequest]=com.cbaker6.CertificateSigningRequest
  [JWTSwift]=com.alpha-coders.JWTSwift [Heimdall]=com.henrinormak.Heimdall [EllipticCurveKeyPair]=no.agens.EllipticCurveKeyPair
  [JOSESwift]=com.airsidemobile.Tests [SwiftyKeychainKit]=NS8HLGG733.com.swifty.keychain.tests.host.TestsHost
)
declare -A ACCESS_GROUPS=(
  [keychain-swift]=""
  [SwiftKeychainWrapper]=""
  [SimpleKeychain]=""
  [KeychainAccess]="27AEDK3C9F.shared"
  [Valet]="9XUJ7M53NG.com.squareup.Valet-iOS-Test-Host-App2,group.valet.test"
  [SwiftyRSA]="" [CertificateSigningRequest]="" [JWTSwift]="" [Heimdall]="" [EllipticCurveKeyPair]=""
  [JOSESwift]="" [SwiftyKeychainKit]=""
)

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
say() { printf '[run.sh] %s\n' "$*" >&2; }

# ---------------------------------------------------------------------------------------------------------
# Python helpers: copying with the import rewrite, parsing build and test output, writing REPORT.md.
read -r -d '' PY <<'PY'
import json, os, re, sys, glob, html

SEC_NAMES = re.compile(r'\b(kSec\w+|errSec\w+|Sec[A-Z]\w+|kCF\w+|CF[A-Z]\w+|OSStatus|noErr)\b')
IMPORT_SECURITY = re.compile(r'^(\s*(?:@[\w()]+\s+)*)import\s+Security\s*(//.*)?$')
IMPORT_REEXPORTER = re.compile(r'^(\s*(?:@[\w()]+\s+)*)import\s+(Foundation|XCTest)\s*(//.*)?$')
APPLE_ONLY = ('LocalAuthentication', 'UIKit', 'AppKit', 'WatchKit', 'AuthenticationServices', 'CommonCrypto', 'CryptoKit',
              'Compression', 'SwiftUI')
# The module that stands for Apple's Security: LatchkeySecurity (its import rewritten), or Security itself (the
# `Security` product, `import Security` kept as it is).
SECURITY_MODULE = os.environ.get('PORTS_SECURITY_MODULE', 'LatchkeySecurity')
IMPORT_APPLE_ONLY = re.compile(r'^(\s*(?:@[\w()]+\s+)*)import\s+(' + '|'.join(APPLE_ONLY) + r')\s*$')

def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)

def rewrite(path, dest, mode, rel):
    src = open(path, encoding='utf-8').read()
    lines = src.split('\n')
    out, notes, origin = [], [], []   # origin[i]: the upstream line number of output line i + 1
    has_security = any(IMPORT_SECURITY.match(l) for l in lines)
    needs_security = bool(SEC_NAMES.search(strip_comments(src)))
    added = False
    for n, line in enumerate(lines, 1):
        m = IMPORT_SECURITY.match(line)
        if m and SECURITY_MODULE == 'Security':
            out.append(line); origin.append(n); continue
        if m:
            new = f'{m.group(1)}import LatchkeySecurity'
            out.append(new); origin.append(n); notes.append(f'{rel}:{n}: `{line.strip()}` -> `{new.strip()}`'); continue
        m = IMPORT_APPLE_ONLY.match(line)
        if m:
            out += [f'#if canImport({m.group(2)})', line, '#endif']; origin += [n, n, n]
            notes.append(f'{rel}:{n}: `{line.strip()}` wrapped in `#if canImport({m.group(2)})` (Apple-only module)')
            continue
        out.append(line); origin.append(n)
        m = IMPORT_REEXPORTER.match(line)
        if m and mode != 'strict' and not has_security and needs_security and not added:
            out.append(f'{m.group(1)}import {SECURITY_MODULE}'); origin.append(n)
            added = True
            notes.append(f'{rel}:{n}: added `import {SECURITY_MODULE}` after `{line.strip()}` '
                         f'(on Apple, Foundation re-exports Security' + (', and XCTest re-exports Foundation' if m.group(2) == 'XCTest' else '') + ')')
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    open(dest, 'w', encoding='utf-8').write('\n'.join(out))
    return notes, origin

def cmd_copy(src_dir, dest_dir, mode, excludes, pkg, upstream_prefix):
    # Also records, in <pkg>/.ports-linemap.json, where each copied line came from upstream, so that compile
    # errors and test failures are reported at the upstream file:line.
    excludes = set(e for e in excludes.split(' ') if e)
    notes, copied, skipped = [], 0, []
    map_path = os.path.join(pkg, '.ports-linemap.json')
    linemap = json.load(open(map_path)) if os.path.exists(map_path) else {}
    for root, dirs, files in os.walk(src_dir):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith('.swift'):
                continue
            full = os.path.join(root, f)
            rel = os.path.relpath(full, src_dir)
            if rel in excludes or f in excludes:
                skipped.append(rel); continue
            dest = os.path.join(dest_dir, rel)
            file_notes, origin = rewrite(full, dest, mode, rel)
            notes += file_notes
            linemap[os.path.relpath(dest, pkg)] = [os.path.join(upstream_prefix, rel), origin]
            copied += 1
    json.dump(linemap, open(map_path, 'w'))
    print(f'copied {copied} Swift files from {src_dir}' + (f'; excluded: {", ".join(skipped)}' if skipped else ''))
    for n in notes:
        print('  rewrite ' + n)

def cmd_copy_data(src_dir, dest_dir, names):
    # Test data the suite reads by a path relative to its own sources (#file), copied beside them unchanged.
    import shutil
    for name in (n for n in names.split(' ') if n):
        src, dest = os.path.join(src_dir, name), os.path.join(dest_dir, name)
        if os.path.isdir(src):
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dest), exist_ok=True); shutil.copy2(src, dest)
        print(f'copied test data {name}')

ERROR_RE = re.compile(r'^(/[^:\n]+\.swift):(\d+):(\d+): error: (.*)$')
PLAIN_ERROR_RE = re.compile(r'^(?:error|.*: error): (.*)$')

def rel_path(p, pkg):
    p = os.path.normpath(p)
    return os.path.relpath(p, pkg) if p.startswith(pkg) else p

_LINEMAPS = {}
def upstream(p, line, pkg):
    """'file:line' of a copied file's line in the upstream repository (shim files keep their own name)."""
    if pkg not in _LINEMAPS:
        try:
            _LINEMAPS[pkg] = json.load(open(os.path.join(pkg, '.ports-linemap.json')))
        except Exception:
            _LINEMAPS[pkg] = {}
    rel = rel_path(p, pkg)
    entry = _LINEMAPS[pkg].get(rel)
    if not entry:
        return rel, int(line)
    path, origin = entry
    line = int(line)
    return path, (origin[line - 1] if 0 < line <= len(origin) else line)

def fileid_to_upstream(where, pkg):
    """'Module/File.swift:12:' (a runtime trap's #fileID) -> the upstream 'path/File.swift:line:'."""
    m = re.match(r'^([\w.]+)/([^/:]+\.swift):(\d+):?$', where)
    if not m:
        return where
    upstream(os.path.join(pkg, 'x'), 1, pkg)  # loads the map
    for rel in _LINEMAPS.get(pkg, {}):
        parts = rel.split('/')
        if len(parts) >= 3 and parts[1] == m.group(1) and parts[-1] == m.group(2):
            f, l = upstream(os.path.join(pkg, rel), m.group(3), pkg)
            return f'{f}:{l}:'
    return where

def cmd_build_errors(log_path, pkg):
    errors, seen, other = [], set(), []
    for line in open(log_path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        m = ERROR_RE.match(line)
        if m:
            key = (*upstream(m.group(1), m.group(2), pkg), m.group(4))
            if key not in seen:
                seen.add(key); errors.append({'file': key[0], 'line': key[1], 'message': key[2]})
            continue
        if ': error:' in line or line.startswith('error:'):
            if not ERROR_RE.match(line) and line not in other and 'fatalError' not in line:
                other.append(line.strip())
    errors.sort(key=lambda e: (e['file'], e['line'], e['message']))
    print(json.dumps({'errors': errors, 'other': other}))

CASE_START = re.compile(r"^Test Case '(?:-\[)?([\w.]+?)[. ](\w+)\]?' started")
CASE_END = re.compile(r"^Test Case '(?:-\[)?([\w.]+?)[. ](\w+)\]?' (passed|failed|skipped)")
FAIL_LINE = re.compile(r'^(\S[^:\n]*):(\d+): error: ([\w.]+?)[. ](\w+) : (.*)$')
SKIP_LINE = re.compile(r'^(/[^:\n]+\.swift):(\d+): ([\w.]+?)[. ](\w+) : Test skipped(.*)$')

def cmd_parse_tests(log_path, pkg, module):
    results, order, current, fatal = {}, [], None, []
    for raw in open(log_path, encoding='utf-8', errors='replace'):
        line = raw.rstrip('\n')
        m = CASE_START.match(line)
        if m:
            name = f'{m.group(1).split(".")[-1]}/{m.group(2)}'
            current = name
            results.setdefault(name, {'status': 'started', 'messages': []}); order.append(name); continue
        m = FAIL_LINE.match(line)
        if m:
            name = f'{m.group(3).split(".")[-1]}/{m.group(4)}'
            results.setdefault(name, {'status': 'started', 'messages': []})
            f, l = upstream(m.group(1), m.group(2), pkg)
            results[name]['messages'].append(f'{f}:{l}: {m.group(5)}'); continue
        m = SKIP_LINE.match(line)
        if m:
            name = f'{m.group(3).split(".")[-1]}/{m.group(4)}'
            results.setdefault(name, {'status': 'started', 'messages': []})
            f, l = upstream(m.group(1), m.group(2), pkg)
            results[name]['messages'].append(f'{f}:{l}: Test skipped{m.group(5)}'); continue
        m = CASE_END.match(line)
        if m:
            name = f'{m.group(1).split(".")[-1]}/{m.group(2)}'
            results.setdefault(name, {'status': 'started', 'messages': []})['status'] = m.group(3)
            current = None; continue
        if current:
            for marker in ('Fatal error:', 'Could not cast value', '*** Program crashed:', 'Precondition failed',
                           'Assertion failed', 'Exited with unexpected signal', 'exited with unexpected signal'):
                at = line.find(marker)
                if at != -1:
                    text = line[at:].strip()
                    # Keep the source position that precedes "Fatal error" on the same line.
                    if marker == 'Fatal error:' and at > 0 and line[:at].split():
                        text = fileid_to_upstream(line[:at].split()[-1], pkg) + ' ' + text
                    if text not in results[current]['messages']:
                        results[current]['messages'].append(text[:300])
                    break
    print(json.dumps({'results': results, 'order': order}))

def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return None

def md_escape(s):
    return s.replace('|', '\\|').replace('\n', ' ')

def cmd_report(results_dir, report_path, libs):
    libs = libs.split()
    parts = ['<!-- BEGIN GENERATED (run.sh rewrites this section; edit outside it) -->', '',
             '## Generated results', '']
    rows = ['| library | commit | mode | compiled | errors | tests | passed | failed | skipped | crashed / hung |',
            '|---|---|---|---|---|---|---|---|---|---|']
    details = []
    for lib in libs:
        for path in sorted(glob.glob(os.path.join(results_dir, f'{lib}.*.json')),
                           key=lambda p: ['strict', 'asis', 'shims', 'shims+patch'].index(p.split('.')[-2])
                           if p.split('.')[-2] in ['strict', 'asis', 'shims', 'shims+patch'] else 9):
            d = load(path)
            if not d:
                continue
            t = d.get('tests') or {}
            res = t.get('results', {})
            counts = {k: sum(1 for r in res.values() if r['status'] == k) for k in ('passed', 'failed', 'skipped')}
            crashed = [n for n, r in res.items() if r['status'] in ('crashed', 'hung', 'not run')]
            rows.append(f"| {lib} | `{d['commit'][:12]}` | {d['mode']} | {'yes' if d['compiled'] else '**no**'} | "
                        f"{len(d['errors'])} | {len(res) if d['compiled'] else '–'} | "
                        f"{counts['passed'] if d['compiled'] else '–'} | {counts['failed'] if d['compiled'] else '–'} | "
                        f"{counts['skipped'] if d['compiled'] else '–'} | {len(crashed) if d['compiled'] else '–'} |")
            details.append(f"### {lib} — {d['mode']}")
            details.append('')
            details.append(f"Commit `{d['commit']}` of github.com/{d['repo']}; Latchkey `{d['latchkey_commit']}` at "
                           f"`{d['latchkey_path']}`; run {d['date']}.")
            if d.get('shims'):
                details.append(f"Shim files: {', '.join('`'+s+'`' for s in d['shims'])}.")
            if d.get('patches'):
                details.append(f"Source patch applied: `{d['patches']}`.")
            details.append('')
            if d['errors'] or d.get('other_errors'):
                details.append(f"**Compile errors ({len(d['errors'])}, deduplicated; grouped by message, every "
                               f"upstream file:line listed):**")
                details.append('')
                groups = {}
                for e in d['errors']:
                    groups.setdefault(e['message'], []).append(f"{e['file']}:{e['line']}")
                for message, sites in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                    details.append(f"- {md_escape(message)} — {len(sites)}×: " + ', '.join(f'`{x}`' for x in sites))
                for o in d.get('other_errors', []):
                    details.append(f"- {md_escape(o)}")
                details.append('')
            if d['compiled']:
                bad = [(n, r) for n, r in sorted(res.items()) if r['status'] not in ('passed',)]
                details.append(f"**Tests:** {len(res)} run, {counts['passed']} passed, {counts['failed']} failed, "
                               f"{counts['skipped']} skipped, {len(crashed)} crashed/hung/not run.")
                details.append('')
                for n, r in bad:
                    msgs = r['messages'] or ['(no message)']
                    details.append(f"- `{n}` — **{r['status']}**")
                    for msg in msgs[:12]:
                        details.append(f"  - {md_escape(msg)[:400]}")
                    if len(msgs) > 12:
                        details.append(f"  - … {len(msgs) - 12} more")
                details.append('')
    parts += rows + [''] + details + ['<!-- END GENERATED -->']
    generated = '\n'.join(parts)
    try:
        old = open(report_path, encoding='utf-8').read()
    except FileNotFoundError:
        old = '# Latchkey ports report\n\n<!-- BEGIN GENERATED -->\n<!-- END GENERATED -->\n'
    begin = old.find('<!-- BEGIN GENERATED')
    end = old.find('<!-- END GENERATED -->')
    if begin == -1 or end == -1:
        new = old.rstrip('\n') + '\n\n' + generated + '\n'
    else:
        new = old[:begin] + generated + old[end + len('<!-- END GENERATED -->'):]
    open(report_path, 'w', encoding='utf-8').write(new)

def cmd_write_json(out, **kw):
    pass

if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'copy': cmd_copy(*args)
    elif cmd == 'copy-data': cmd_copy_data(*args)
    elif cmd == 'build-errors': cmd_build_errors(*args)
    elif cmd == 'parse-tests': cmd_parse_tests(*args)
    elif cmd == 'report': cmd_report(*args)
    elif cmd == 'merge':
        # merge <out.json> <meta.json> <errors.json> <tests.json|->
        out, meta, errs, tests = args
        d = json.load(open(meta))
        e = json.load(open(errs))
        d['errors'], d['other_errors'] = e['errors'], e['other']
        d['tests'] = json.load(open(tests)) if tests != '-' else None
        json.dump(d, open(out, 'w'), indent=1)
    elif cmd == 'tests-combine':
        # tests-combine <out.json> <list-file> <part.json>...  : merge partial runs, mark never-finished tests
        out, listing, parts = args[0], args[1], args[2:]
        names = [l.strip() for l in open(listing) if l.strip()]
        names = [n.split('.', 1)[1] if '.' in n.split('/')[0] else n for n in names]
        results = {}
        for p in parts:
            d = json.load(open(p))
            for n, r in d['results'].items():
                if n in results and results[n]['status'] != 'started':
                    continue
                results[n] = r
        for n in names:
            results.setdefault(n, {'status': 'not run', 'messages': []})
        json.dump({'results': results, 'listed': names}, open(out, 'w'), indent=1)
    elif cmd == 'remaining':
        # remaining <list-file> <part.json>... : tests (Module.Class/test) with no final status yet
        listing, parts = args[0], args[1:]
        done = set()
        for p in parts:
            for n, r in json.load(open(p))['results'].items():
                if r['status'] in ('passed', 'failed', 'skipped', 'crashed', 'hung'):
                    done.add(n)
        for l in open(listing):
            l = l.strip()
            if not l: continue
            short = l.split('.', 1)[1] if '.' in l.split('/')[0] else l
            if short not in done:
                print(l)
    elif cmd == 'mark':
        # mark <part.json> <status> : the test that started but never finished crashed or hung
        path, status = args
        d = json.load(open(path))
        for n, r in d['results'].items():
            if r['status'] == 'started':
                r['status'] = status
        json.dump(d, open(path, 'w'), indent=1)
    else:
        sys.exit(f'unknown command {cmd}')
PY

pyh() { python3 -c "$PY" "$@"; }

# ---------------------------------------------------------------------------------------------------------
ensure_latchkey() {
  if [[ "$LATCHKEY_PATH" == "$DEFAULT_LATCHKEY" ]]; then
    if [[ ! -d "$DEFAULT_LATCHKEY/.git" ]]; then
      say "cloning $LATCHKEY_ORIGIN into $DEFAULT_LATCHKEY"
      git clone -q "$LATCHKEY_ORIGIN" "$DEFAULT_LATCHKEY" || exit 1
    elif [[ "${UPDATE_LATCHKEY:-0}" == 1 ]]; then
      say "updating $DEFAULT_LATCHKEY"
      git -C "$DEFAULT_LATCHKEY" pull -q || exit 1
    fi
  fi
  [[ -f "$LATCHKEY_PATH/Package.swift" ]] || { say "no Latchkey package at $LATCHKEY_PATH"; exit 1; }
}

# The library's source: $SRC/<name>, checked out from the fetched mirror when one is present.
ensure_source() {
  local name="$1" repo="${REPO[$1]}"
  local mirror="$MIRROR_DIR/${repo/\//+}/repo"
  if [[ -d "$mirror" ]]; then
    local want; want="$(git --git-dir="$mirror" rev-parse HEAD)"
    if [[ ! -f "$SRC/$name.commit" || "$(cat "$SRC/$name.commit")" != "$want" || ! -d "$SRC/$name" ]]; then
      rm -rf "$SRC/$name"; mkdir -p "$SRC/$name"
      git --git-dir="$mirror" --work-tree="$SRC/$name" checkout -f HEAD -- . || return 1
      echo "$want" > "$SRC/$name.commit"
    fi
  fi
  [[ -d "$SRC/$name" && -f "$SRC/$name.commit" ]] || {
    say "no source for $name: fetch github:$repo and check it out into $SRC/$name (commit in $SRC/$name.commit)"
    return 1
  }
}

write_manifest() {
  local name="$1" module="${MODULE[$1]}" dir="$PKG/$1" shims="$2" product=LatchkeySecurity
  [[ -n "${IMPORT_SECURITY[$1]:-}" ]] && product=Security
  # Shim modules a library imports by name (shims/<name>/modules/<Module>/, copied to ShimModules/): a target
  # each, which the library and its tests depend on in the shims modes.
  local named="" named_targets=""
  if [[ "$shims" == 1 && -d "$dir/ShimModules" ]]; then
    for m in "$dir"/ShimModules/*/; do
      m="$(basename "$m")"
      named+=", \"$m\""
      named_targets+="    targets.append(.target(name: \"$m\", path: \"ShimModules/$m\"))"$'\n'
    done
  fi
  cat > "$dir/Package.swift" <<EOF
// swift-tools-version:6.0
// Generated by tools/ports/run.sh — $name ported to Linux over $product. Do not edit by hand.
// Written for LATCHKEY_PORTS_SHIMS=$shims (the comment also makes SwiftPM re-read the manifest per mode).
import PackageDescription

let latchkeyPath = Context.environment["LATCHKEY_PATH"] ?? "$DEFAULT_LATCHKEY"
// Set by run.sh for the "shims" mode: stub declarations in Shims/ become module LatchkeyShims, imported
// implicitly by the library and its tests (their sources are not touched).
let useShims = (Context.environment["LATCHKEY_PORTS_SHIMS"] ?? "0") == "1"

let implicitShims: [SwiftSetting] = useShims
    ? [.unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "LatchkeyShims"])] : []
let shimDependency: [Target.Dependency] = useShims ? ["LatchkeyShims"$named] : []

var targets: [Target] = [
    .target(
        name: "$module",
        dependencies: [.product(name: "$product", package: "Latchkey")] + shimDependency,
        path: "Sources/$module",
        swiftSettings: implicitShims),
    .testTarget(
        name: "${module}Tests",
        dependencies: ["$module", .product(name: "$product", package: "Latchkey")] + shimDependency,
        path: "Tests/${module}Tests",
        swiftSettings: implicitShims),
]
if useShims {
    targets.append(.target(
        name: "LatchkeyShims",
        dependencies: [.product(name: "$product", package: "Latchkey")],
        path: "Shims"))
$named_targets}

let package = Package(
    name: "$name-latchkey-port",
    products: [.library(name: "$module", targets: ["$module"])],
    dependencies: [.package(name: "Latchkey", path: latchkeyPath)],
    targets: targets,
    swiftLanguageModes: [.v5]
)
EOF
}

# Runs the listed tests, resuming after a crash or a hang until every test has a result.
run_tests() {
  local name="$1" dir="$2" mode="$3" tag="$4" work="$5"
  local listing="$work/$tag.list" parts=() round=0
  (cd "$dir" && swift test list --skip-build 2>>"$LOG") | grep '/' > "$listing"
  log "tests listed: $(wc -l < "$listing")"
  while :; do
    round=$((round + 1))
    local remaining="$work/$tag.remaining.$round"
    if ((${#parts[@]})); then pyh remaining "$listing" "${parts[@]}" > "$remaining"; else cp "$listing" "$remaining"; fi
    [[ -s "$remaining" ]] || break
    ((round > 200)) && { log "giving up after 200 rounds"; break; }
    local filter; filter="^($(sed 's/[.]/\\./g' "$remaining" | paste -sd'|'))\$"
    local out="$work/$tag.test.$round.txt"
    log "--- swift test round $round ($(wc -l < "$remaining") tests left)"
    (cd "$dir" && timeout --kill-after=10 "$TEST_TIMEOUT" swift test --skip-build --filter "$filter" > "$out" 2>&1)
    local rc=$?
    cat "$out" >> "$LOG"
    log "--- exit status $rc"
    local part="$work/$tag.part.$round.json"
    pyh parse-tests "$out" "$dir" "${MODULE[$name]}" > "$part"
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then pyh mark "$part" hung
    elif [[ $rc -ne 0 && $rc -ne 1 ]]; then pyh mark "$part" crashed
    else pyh mark "$part" crashed   # exit 0/1 with an unfinished test: the process died inside it
    fi
    parts+=("$part")
    # No progress at all (the runner failed before any test started): stop.
    if ! grep -q '"status"' "$part"; then log "no test ran in round $round; stopping"; break; fi
  done
  pyh tests-combine "$work/$tag.tests.json" "$listing" "${parts[@]}"
}

run_one() {
  local name="$1" mode="$2"
  local dir="$PKG/$name" src="$SRC/$name" module="${MODULE[$name]}" tag="$mode"
  local work="$RESULTS/work/$name"; mkdir -p "$work"
  local shims_used=() patch_used=""
  if [[ "$mode" == shims || "$mode" == patch ]]; then
    shopt -s nullglob; local files=("$SHIMS/$name"/*.swift); shopt -u nullglob
    if ((${#files[@]} == 0)); then log "(no shim file for $name: no $mode run)"; return 0; fi
  fi
  if [[ "$mode" == patch ]]; then
    [[ -f "$PATCHES/$name.sh" ]] || { log "(no patch for $name: no patch run)"; return 0; }
    tag="shims+patch"
  fi
  log ""
  log "=================================================================================================="
  log "== $name — mode $tag — $(date -u +%FT%TZ)"
  log "=================================================================================================="
  local import_mode=asis; [[ "$mode" == strict ]] && import_mode=strict
  rm -rf "$dir/Sources" "$dir/Tests" "$dir/Shims" "$dir/ShimModules" "$dir/.ports-linemap.json"; mkdir -p "$dir"
  if [[ -n "${IMPORT_SECURITY[$name]:-}" ]]; then export PORTS_SECURITY_MODULE=Security; else export PORTS_SECURITY_MODULE=LatchkeySecurity; fi
  pyh copy "$src/${LIB_DIR[$name]}" "$dir/Sources/$module" "$import_mode" "${LIB_EXCLUDE[$name]:-}" "$dir" "${LIB_DIR[$name]}" | tee -a "$LOG"
  pyh copy "$src/${TEST_DIR[$name]}" "$dir/Tests/${module}Tests" "$import_mode" "${TEST_EXCLUDE[$name]:-}" "$dir" "${TEST_DIR[$name]}" | tee -a "$LOG"
  [[ -n "${TEST_DATA[$name]:-}" ]] && pyh copy-data "$src/${TEST_DIR[$name]}" "$dir/Tests/${module}Tests" "${TEST_DATA[$name]}" | tee -a "$LOG"
  # A test entry point of the harness's (entrypoints/<name>.swift) replaces SwiftPM's discovery where that cannot
  # find a suite's tests: it becomes Tests/LinuxMain.swift, which SwiftPM then builds the test runner from.
  if [[ -f "$PORTS/entrypoints/$name.swift" ]]; then
    cp "$PORTS/entrypoints/$name.swift" "$dir/Tests/LinuxMain.swift"
    log "test entry point: entrypoints/$name.swift (SwiftPM's discovery cannot list this suite's tests)"
  fi
  local use_shims=0
  if [[ "$mode" == shims || "$mode" == patch ]]; then
    use_shims=1; mkdir -p "$dir/Shims"
    for f in "$SHIMS/$name"/*.swift; do cp "$f" "$dir/Shims/"; shims_used+=("shims/$name/$(basename "$f")"); done
    for m in "$SHIMS/$name"/modules/*/; do
      [[ -d "$m" ]] || continue
      mkdir -p "$dir/ShimModules/$(basename "$m")"
      for f in "$m"*.swift; do
        cp "$f" "$dir/ShimModules/$(basename "$m")/"; shims_used+=("shims/$name/modules/$(basename "$m")/$(basename "$f")")
      done
    done
    log "shims: ${shims_used[*]}"
    if [[ "$tag" == "shims+patch" ]]; then
      patch_used="patches/$name.sh"
      log "applying source patch $patch_used (NOT an import rewrite; see REPORT.md):"
      (cd "$dir" && bash "$PATCHES/$name.sh") 2>&1 | tee -a "$LOG"
      # The patch changes no line count; the line map stays valid.
    fi
  fi
  write_manifest "$name" "$use_shims"
  export LATCHKEY_PORTS_SHIMS=$use_shims

  local build_out="$work/$tag.build.txt"
  log "--- swift build --build-tests (LATCHKEY_PATH=$LATCHKEY_PATH)"
  (cd "$dir" && swift build --build-tests -j "$JOBS" > "$build_out" 2>&1)
  local build_rc=$?
  cat "$build_out" >> "$LOG"
  log "--- build exit status $build_rc"
  pyh build-errors "$build_out" "$dir" > "$work/$tag.errors.json"

  local tests_json=-
  if [[ $build_rc -eq 0 ]]; then
    local bin; bin="$(cd "$dir" && swift build --show-bin-path 2>/dev/null)"
    cat > "$bin/Info.plist" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>CFBundleIdentifier</key><string>${BUNDLE_ID[$name]}</string>
</dict></plist>
EOF
    if [[ -n "${BUNDLE_RESOURCES[$name]:-}" ]]; then
      (cd "$src" && for f in ${BUNDLE_RESOURCES[$name]}; do cp "$f" "$bin/"; done)
      log "test resources next to the test binary: ${BUNDLE_RESOURCES[$name]}"
    fi
    local kc="$work/$tag.keychain"
    rm -f "$kc" "$kc"-* "$kc".*
    export LATCHKEY_KEYCHAIN="$kc"
    export LATCHKEY_PASSPHRASE="latchkey-ports-harness (throwaway keychain)"
    export LATCHKEY_APPLICATION_ID="${APP_ID[$name]}"
    export LATCHKEY_ACCESS_GROUPS="${ACCESS_GROUPS[$name]}"
    # No agent: a socket path that does not exist, in a directory of mode 0700 (Latchkey refuses to use an
    # agent socket in a directory other users could reach, with errSecWrPerm for every call).
    mkdir -p "$work/agent"; chmod 700 "$work/agent"; rm -f "$work/agent/none.sock"
    export LATCHKEY_AGENT_SOCKET="$work/agent/none.sock"
    log "test environment: bundle id ${BUNDLE_ID[$name]} (Info.plist in $bin), LATCHKEY_APPLICATION_ID=$LATCHKEY_APPLICATION_ID, LATCHKEY_ACCESS_GROUPS=$LATCHKEY_ACCESS_GROUPS, LATCHKEY_KEYCHAIN=$kc"
    run_tests "$name" "$dir" "$mode" "$tag" "$work"
    tests_json="$work/$tag.tests.json"
  fi

  local latchkey_commit; latchkey_commit="$(git -C "$LATCHKEY_PATH" rev-parse HEAD 2>/dev/null || echo unknown)"
  if [[ -n "$(git -C "$LATCHKEY_PATH" status --porcelain 2>/dev/null)" ]]; then latchkey_commit+=" (+ uncommitted changes)"; fi
  local shims_json; shims_json="$(printf '%s\n' "${shims_used[@]}" | python3 -c 'import json,sys; print(json.dumps([l.strip() for l in sys.stdin if l.strip()]))')"
  python3 - "$work/$tag.meta.json" <<EOF
import json, sys
json.dump({'library': '$name', 'repo': '${REPO[$name]}', 'commit': open('$SRC/$name.commit').read().strip(),
           'mode': '$tag', 'compiled': $([[ $build_rc -eq 0 ]] && echo True || echo False),
           'latchkey_path': '$LATCHKEY_PATH', 'latchkey_commit': '$latchkey_commit',
           'date': '$(date -u +%FT%TZ)', 'shims': $shims_json, 'patches': '$patch_used'}, open(sys.argv[1], 'w'))
EOF
  pyh merge "$RESULTS/$name.$tag.json" "$work/$tag.meta.json" "$work/$tag.errors.json" "$tests_json"
  say "$name [$tag]: build exit $build_rc; results in $RESULTS/$name.$tag.json"
}

main() {
  if [[ "${1:-}" == --report ]]; then   # only regenerate REPORT.md's generated section from results/*.json
    pyh report "$RESULTS" "$REPORT" "${ALL_LIBS[*]}"; say "report: $REPORT"; return 0
  fi
  local libs=("$@")
  ((${#libs[@]})) || libs=("${ALL_LIBS[@]}")
  for l in "${libs[@]}"; do [[ -n "${MODULE[$l]:-}" ]] || { say "unknown library $l (known: ${ALL_LIBS[*]})"; exit 64; }; done
  ensure_latchkey
  mkdir -p "$RESULTS" "$PKG"
  for name in "${libs[@]}"; do
    LOG="$RESULTS/$name.log"; : > "$LOG"
    ensure_source "$name" || continue
    log "# $name (github.com/${REPO[$name]} @ $(cat "$SRC/$name.commit")) against Latchkey at $LATCHKEY_PATH ($(git -C "$LATCHKEY_PATH" rev-parse --short HEAD 2>/dev/null))"
    for mode in $MODES; do run_one "$name" "$mode"; done
  done
  pyh report "$RESULTS" "$REPORT" "${ALL_LIBS[*]}"
  say "report: $REPORT"
}

main "$@"
