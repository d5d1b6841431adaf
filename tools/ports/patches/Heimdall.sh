# Source patch for the "shims+patch" run of Heimdall (run in pkg/Heimdall; lines are only changed in place,
# never added or removed, so reported line numbers stay upstream's).
# Heimdall reads bytes through `(data as NSData).bytes`: on Apple platforms the bridged NSData shares the
# Data's storage; swift-corelibs-foundation's bridging makes a new NSData that is released at once, so the
# pointer dangles (its SHA-256 of the same message differs each time) — a Foundation difference, not
# Security's. Each such read becomes a copy of the bytes that lives through the call: `(x as NSData).bytes…`
# -> `[UInt8](x)` (an array passes where the pointer did).
set -e
f=Sources/Heimdall/Heimdall.swift
count=$(grep -c 'as NSData).bytes' "$f")
perl -pi -e 's/\[(\w+)\]\(UnsafeBufferPointer<\w+>\(start: \((\w+) as NSData\)\.bytes\.bindMemory\(to: \w+\.self, capacity: [\w.]+\), count: [^)]*\)\)/[$1]($2)/g; s/\((\w+) as NSData\)\.bytes\.bindMemory\(to: (\w+)\.self, capacity: [\w.]+\)/[$2]($1)/g; s/\((\w+) as NSData\)\.bytes/[UInt8]($1)/g' "$f"
echo "replaced $count dangling NSData.bytes reads in $f"
! grep -n 'as NSData).bytes' "$f"
