// The data every competitor works on, built once outside the measured blocks.

import Foundation

struct Address: Codable, Equatable {
    var street: String
    var city: String
    var zip: Int
}

struct User: Codable, Equatable {
    var id: Int
    var name: String
    var email: String
    var active: Bool
    var score: Double
    var tags: [String]
    var address: Address
    var nickname: String?
    var created: Date
}

/// 1,000 users; every third `nickname` is nil; three tags each.
let users: [User] = (0..<1_000).map(makeUser)

/// Big trees (issue 54): 10,000 users, as the coder meets them when used on its own.
let records: [User] = (0..<10_000).map(makeUser)

/// The records as an XML property list (about 5 MB), and the tree Foundation parses from
/// it: what an app that reads a plist file hands the decoder. (Unsafe: never mutated.)
let recordsPlist = try! PropertyListSerialization.data(fromPropertyList: HandWritten.encode(records), format: .xml, options: 0)
nonisolated(unsafe) let parsedRecords: Any = try! PropertyListSerialization.propertyList(from: recordsPlist, format: nil)

func makeUser(_ i: Int) -> User {
    let tags: [String] = ["tag\(i % 7)", "group\(i % 5)", "all"]
    let address = Address(street: "\(i) Main Street", city: "Springfield", zip: 10_000 + i)
    let nickname: String? = i % 3 == 0 ? nil : "nick\(i)"
    let created = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
    return User(
        id: i, name: "User \(i)", email: "user\(i)@example.com", active: i % 2 == 0,
        score: Double(i) * 1.5, tags: tags, address: address, nickname: nickname, created: created)
}

enum Theme: String, Codable { case light, dark, system }

/// One typical UserDefaults value: twelve fields with an enum, a URL, a Date and an optional.
struct Settings: Codable, Equatable {
    var theme: Theme
    var fontSize: Double
    var showsToolbar: Bool
    var launchCount: Int
    var userName: String
    var homepage: URL
    var lastOpened: Date
    var signature: String?
    var recentFiles: [String]
    var volume: Float
    var language: String
    var retries: Int
}

let settings = Settings(
    theme: .dark, fontSize: 13.5, showsToolbar: true, launchCount: 42, userName: "herbert",
    homepage: URL(string: "https://fish.com/chips?x=1")!, lastOpened: Date(timeIntervalSince1970: 1_700_000_000),
    signature: "Cheers", recentFiles: ["a.txt", "b.txt", "c.txt"], volume: 0.5, language: "en", retries: 3
)

let wideInts: [Int] = Array(0..<100_000)
let wideDoubles: [String: Double] = Dictionary(uniqueKeysWithValues: (0..<10_000).map { ("key\($0)", Double($0) / 4) })

/// A value nested `depth` levels.
indirect enum Nested: Codable, Equatable, Sendable {
    case leaf(Int)
    case node(name: String, child: Nested)

    static func make(depth: Int) -> Nested {
        var value = Nested.leaf(0)
        for level in 0..<depth { value = .node(name: "level\(level)", child: value) }
        return value
    }
}

let deep8 = Nested.make(depth: 8)
let deep64 = Nested.make(depth: 64)

/// A tree read from `UserDefaults` as plain Swift collections, its `Optional`s unwrapped.
func swiftTree(_ value: Any) -> Any {
    if let dictionary = value as? [String: Any] {
        return dictionary.mapValues(swiftTree)
    }
    if let array = value as? [Any] {
        return array.map(swiftTree)
    }
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional, let wrapped = mirror.children.first?.value {
        return swiftTree(wrapped)
    }
    return value
}

/// The same tree built from Foundation's own classes (`NSMutableDictionary`, `NSArray`,
/// `NSString`, `NSNumber`), made anew each call, as a coder would have to make it.
func foundationClasses(_ value: Any) -> Any {
    if let dictionary = value as? [String: Any] {
        let result = NSMutableDictionary(capacity: dictionary.count)
        for (key, element) in dictionary { result[NSString(string: key)] = foundationClasses(element) }
        return result
    }
    if let array = value as? [Any] {
        return NSArray(array: array.map(foundationClasses))
    }
    switch value {
    case let string as String: return NSString(string: string)
    case let bool as Bool: return NSNumber(value: bool)
    case let int as Int: return NSNumber(value: int)
    case let double as Double: return NSNumber(value: double)
    default: return value
    }
}
