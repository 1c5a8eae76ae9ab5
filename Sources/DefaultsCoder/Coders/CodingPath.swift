//
//  CodingPath.swift
//  DefaultsCoder
//
//  Coding keys and the coding path: each container holds one immutable node, and the
//  `[any CodingKey]` array is built only when an error is thrown or `codingPath` is read.
//

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
struct IndexCodingKey: CodingKey, Sendable {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(intValue: Int) { self.index = intValue }
    init?(stringValue: String) { nil }
    var intValue: Int? { index }
    var stringValue: String { "Index \(index)" }
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

/// The path of a container: its parent's node and the step from there. Immutable, so a
/// nested container or a super coder can keep it after the call that made it returns.
/// The root is `nil`.
final class CodingPathNode {
    let parent: CodingPathNode?
    let step: PathStep
    /// How many steps from the root: the number of containers around this one's value.
    let depth: Int

    init(parent: CodingPathNode?, step: PathStep) {
        self.parent = parent
        self.step = step
        self.depth = (parent?.depth ?? 0) + 1
    }

    /// The path from the root down to and including `node`, followed by `last`.
    static func codingPath(of node: CodingPathNode?, then last: PathStep? = nil) -> [any CodingKey] {
        var path: [any CodingKey] = []
        let count = (node?.depth ?? 0) + (last == nil ? 0 : 1)
        guard count > 0 else { return [] }
        path.reserveCapacity(count)
        var current = node
        while let step = current?.step {
            path.append(step.codingKey)
            current = current?.parent
        }
        path.reverse()
        if let last { path.append(last.codingKey) }
        return path
    }

    /// This node's whole path.
    var codingPathArray: [any CodingKey] { CodingPathNode.codingPath(of: self) }

    /// A node for `node` followed by `step`, or `node` itself when there is no step.
    static func appending(_ step: PathStep?, to node: CodingPathNode?) -> CodingPathNode? {
        guard let step else { return node }
        return CodingPathNode(parent: node, step: step)
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
