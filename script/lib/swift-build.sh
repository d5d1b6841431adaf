# Sourced by the scripts that build: how they run `swift build`.
#
# NO_COLOR=1 for every build: SwiftPM otherwise passes -color-diagnostics or -no-color-diagnostics to each
# compile depending on the terminal (whether there is one, and its TERM), and a changed flag rebuilds every
# module (98 s for the demo in release, measured in a terminal after a build without one); with NO_COLOR
# it passes neither, terminal or not, so ./script/demo typed in a terminal and run from a pipe share .build.
swift_build() {
    NO_COLOR=1 swift build "$@"
}

# A release build with the Swift runtime linked statically and without SwiftPM's $ORIGIN run path (the programs
# load no library from beside themselves, and with it the loader first looks for libc, libm, libstdc++ and
# libgcc_s there, in eleven directories, at every start: 26 system calls more, 24 of them failing;
# docs/DESIGN-NOTES.md, "The CLI's start"), its output on standard error. A static link warns "the use of
# `mktemp' is dangerous": the Swift toolchain's static FoundationEssentials calls mktemp (createTemporaryFile),
# Latchkey never does, so that one line says nothing about this code and is dropped; everything else the build
# prints passes as it comes, and a failed build fails.
static_build() {
    swift_build -c release --static-swift-stdlib --disable-local-rpath "$@" 2>&1 | { grep --line-buffered -v "warning: the use of \`mktemp' is dangerous" || true; } >&2
}
