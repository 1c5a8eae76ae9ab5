// `import DefaultsCoder` is the whole library: the coders and the suites are modules of
// their own, below this one, and come with it.

@_exported import DefaultsCoderStorage
@_exported import KeyValueCoders
