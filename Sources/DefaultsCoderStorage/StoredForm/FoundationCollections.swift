// The stored tree as Foundation's own collection classes, which is how it is handed to
// `UserDefaults.set(_:forKey:)` on platforms without `cfprefsd`.

import Foundation
import KeyValueCoders

enum FoundationCollections {
    /// `tree` with each `[String: Any]` made an `NSMutableDictionary` and each `[Any]` an
    /// `NSMutableArray`, recursively; every other value as it is.
    ///
    /// swift-corelibs-foundation's `set(_:forKey:)` checks a Swift dictionary by casting
    /// it to `[AnyHashable: Any]`, then bridges it to an `NSDictionary`, both entry by
    /// entry; handed its own classes it skips that work, which made a write of a
    /// settings struct cost less in all, this pass included (`Benchmarks/README.md`).
    /// What Foundation stores is the same: it bridges the values inside either way.
    /// On Apple platforms a Swift collection bridges lazily, and the tree is returned
    /// as it is.
    static func make(_ tree: Any) -> Any {
        #if canImport(Darwin)
        return tree
        #else
        return convert(tree)
        #endif
    }

    /// Exact metatype tests (`exactCast`): asking a `String` or an `Int`
    /// `as? [String: Any]` on Linux would first bridge it to Foundation. Other
    /// collection types the encoder passes through whole (`[String]`,
    /// `[String: Double]`, …) hold no container, and are left for Foundation to bridge.
    private static func convert(_ value: Any) -> Any {
        if let dictionary = exactCast(value, to: [String: Any].self) {
            let result = NSMutableDictionary(capacity: dictionary.count)
            for (key, element) in dictionary {
                result.setObject(convert(element), forKey: NSString(string: key))
            }
            return result
        }
        if let array = exactCast(value, to: [Any].self) {
            let result = NSMutableArray(capacity: array.count)
            for element in array { result.add(convert(element)) }
            return result
        }
        return value
    }
}
