// Coding keys and the coding path: each container holds one immutable node, and the
// `[any CodingKey]` array is built only when an error is thrown or `codingPath` is read.

import Foundation

/// A coding key made from a string or an integer.
///
/// Hand one back from a `.custom` key strategy, or use it to build coding paths in tests.
///
/// ```swift
/// encoder.keyEncodingStrategy = .custom { path in
///     KeyValueCodingKey(stringValue: path.last!.stringValue.uppercased())
/// }
/// ```
public struct KeyValueCodingKey: CodingKey, Hashable, Sendable {
    /// The key as a string.
    public let stringValue: String
    /// The key as an integer, when it has one.
    public let intValue: Int?

    /// Creates a key from a string.
    /// - Parameter stringValue: The key.
    public init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    /// Creates a key from an integer, such as an array index.
    /// - Parameter intValue: The key; its `stringValue` is the decimal form.
    public init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    /// Creates a key with both forms.
    /// - Parameters:
    ///   - stringValue: The string form.
    ///   - intValue: The integer form.
    public init(stringValue: String, intValue: Int?) {
        self.stringValue = stringValue
        self.intValue = intValue
    }

    /// The key that superclass values are stored under, as in Foundation's coders.
    public static let `super` = KeyValueCodingKey(stringValue: "super")
}

/// The key of an element of an unkeyed container. Kept apart from `KeyValueCodingKey`
/// so that readable paths print it as `[3]`, and a dictionary key `"3"` as `.3`.
package struct IndexCodingKey: CodingKey, Sendable {
    let index: Int
    package init(_ index: Int) { self.index = index }
    package init?(intValue: Int) { self.index = intValue }
    package init?(stringValue: String) { nil }
    package var intValue: Int? { index }
    package var stringValue: String { "Index \(index)" }
}

/// One step down a coding path: a key, or an array index as an `IndexCodingKey`, which
/// fits in the existential's inline buffer and so is never boxed. A struct of one
/// existential rather than an enum of a key or an `Int`: an optional of such an enum is
/// tested and copied through runtime calls, an optional existential inline.
struct PathStep {
    let codingKey: any CodingKey

    /// The step to the value under `key`.
    @inline(__always)
    static func key(_ key: any CodingKey) -> PathStep { PathStep(codingKey: key) }

    /// The step to the element at `index`.
    @inline(__always)
    static func index(_ index: Int) -> PathStep { PathStep(codingKey: IndexCodingKey(index)) }
}

/// The place of a container in the coding path: a level of its coder's `PathLevels`.
/// A value with no reference in it, so that a container holding one copies it for
/// nothing. The root is `nil`.
struct CodingPathNode {
    /// The level's index in its coder's `PathLevels`.
    fileprivate let index: Int32
    /// Which push made the level: a level popped and pushed again is another one.
    fileprivate let generation: UInt32
    /// How many steps from the root: the number of containers around this one's value.
    let depth: Int
}

/// The coding path of the values a coder is in, as a stack of levels, one per container:
/// each holds its step and the index of its parent's level. A container keeps only a
/// `CodingPathNode`, so that making a container allocates nothing for its path; the
/// `[any CodingKey]` array is built only when an error is thrown or `codingPath` is read.
///
/// A value: each coder holds its own, and a super encoder or decoder starts from a copy
/// of its parent's (the array is shared until one of them pushes), so that a coder
/// whose containers push nothing (a value at the top) allocates nothing for its path.
///
/// Levels are pushed by containers and popped when the value they belong to is complete
/// (`pop(to:)`, around each nested value). A container used after that — one kept
/// past its value's `encode(to:)` or `init(from:)` — finds its level gone and names only
/// the steps below it: its path, not its values, is what it loses.
struct PathLevels {
    private struct Level {
        let parent: Int32
        let step: PathStep
        let generation: UInt32
    }

    private var levels: [Level] = []
    private var generations: UInt32 = 0

    /// How many levels there are; pass it to `pop(to:)` to drop the ones pushed since.
    var height: Int { levels.count }

    /// A level for `node` followed by `step`, or `node` itself when there is no step.
    mutating func appending(_ step: PathStep?, to node: CodingPathNode?) -> CodingPathNode? {
        guard let step else { return node }
        return push(step, below: node)
    }

    /// The node of a coder's current value, whose path is `node` followed by `step`: the
    /// step is moved into a level of its own and `node` becomes that level, so that the
    /// pair names the same path and a second container of the value pushes nothing.
    /// Moved, not copied: a copy of a `PathStep?`, and its destroy, go through
    /// `Optional`'s generic value witnesses, since the optimizer merges them with those
    /// of other optionals (`Benchmarks/README.md`).
    @inline(__always)
    mutating func settle(_ step: inout PathStep?, below node: inout CodingPathNode?) -> CodingPathNode? {
        if let step = step.take() { node = push(consume step, below: node) }
        return node
    }

    /// A new level for `step` below `node`.
    mutating func push(_ step: consuming PathStep, below node: CodingPathNode?) -> CodingPathNode {
        generations &+= 1
        // A parent whose level is gone is left out, so that every level's parent sits
        // below it: the walk up a path always ends, inside the stack.
        let parent = node.flatMap { isCurrent($0) ? $0.index : nil } ?? -1
        levels.append(Level(parent: parent, step: step, generation: generations))
        return CodingPathNode(index: Int32(truncatingIfNeeded: levels.count - 1), generation: generations, depth: (node?.depth ?? 0) + 1)
    }

    /// Drops the levels above `height`; a height above today's does nothing.
    mutating func pop(to height: Int) {
        // One at a time: `removeLast(_:)` goes through the generic `replaceSubrange`.
        while levels.count > height { levels.removeLast() }
    }

    /// Whether `node`'s level is still on the stack.
    private func isCurrent(_ node: CodingPathNode) -> Bool {
        Int(node.index) < levels.count && levels[Int(node.index)].generation == node.generation
    }

    /// The path from the root down to and including `node`, followed by `last`.
    func codingPath(of node: CodingPathNode?, then last: PathStep? = nil) -> [any CodingKey] {
        var path: [any CodingKey] = []
        path.reserveCapacity((node?.depth ?? 0) + 1)
        // A level's parents were pushed before it and are popped after it: when the
        // level is still the node's, so are they.
        if let node, isCurrent(node) {
            var index = Int(node.index)
            while index >= 0 {
                path.append(levels[index].step.codingKey)
                index = Int(levels[index].parent)
            }
        }
        path.reverse()
        if let last { path.append(last.codingKey) }
        return path
    }
}

/// The readable form of a coding path used in every error message: `SELF[1].name`.
func readablePath(_ path: [any CodingKey]) -> String {
    "SELF" + path.map(readableStep).joined()
}

/// The path as an error message prints it: whole up to 16 steps; beyond, the first and
/// last six and the depth (`SELF.next.next … .next.next (600 deep)`), so that a cycle
/// encoded thousands deep does not print a path thousands of steps long.
func messagePath(_ path: [any CodingKey]) -> String {
    guard path.count > 16 else { return readablePath(path) }
    let first = path.prefix(6).map(readableStep).joined()
    let last = path.suffix(6).map(readableStep).joined()
    return "SELF\(first) … \(last) (\(path.count) deep)"
}

private func readableStep(_ key: any CodingKey) -> String {
    if let index = key as? IndexCodingKey { return "[\(index.index)]" }
    return ".\(key.stringValue)"
}
