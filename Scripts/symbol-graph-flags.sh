# Sourced by Scripts/build-docs.sh and .ci/run: the flags that make a SwiftPM build emit
# the symbol graphs DocC is made from (with extension blocks), into the directory that
# follows them on the command line. One list, so that the graphs .ci/run's sanitizer
# builds emit are the ones build-docs.sh would have built.
symbol_graph_flags=(-Xswiftc -emit-symbol-graph -Xswiftc -emit-extension-block-symbols -Xswiftc -emit-symbol-graph-dir -Xswiftc)
