// The one checked reader of keyed archives on Linux, as `PropertyListReader` is for
// property lists: an archive's structure, references, depth, cycles, classes and
// payloads are checked before swift-corelibs-foundation's `NSKeyedUnarchiver` sees the
// bytes. That unarchiver traps (SIGSEGV, SIGILL, SIGABRT) on a reference cycle, a deep
// graph, a class reference out of range or not naming a class, keys and objects of
// different lengths, or a payload of the wrong type, and reads some damaged payloads
// as other values (an `NSDate` whose time is not a number as 2001-01-01). Apple's secure
// unarchiver throws for these, so the check runs on Linux only.

import DefaultsCoderStorage
import KeyValueCoders

#if !canImport(Darwin)
import Foundation

enum KeyedArchiveCheck {
    /// Why `data` must not reach the unarchiver, or `nil` when it may: it is a keyed
    /// archive whose every reference names an object in it, whose graph from its root
    /// holds no cycle and is at most `NestingGuard.maximumContainers` deep, whose every
    /// object is of a class in `allowed` that supports secure coding, and whose
    /// Foundation objects hold payloads of their types.
    static func problem(in data: Data, allowed: [AnyClass]) -> String? {
        guard let archive = try? PropertyListReader.propertyList(from: data, kind: .archive) as? [String: Any],
            archive["$archiver"] as? String == "NSKeyedArchiver",
            let objects = archive["$objects"] as? [Any],
            let top = archive["$top"] as? [String: Any]
        else { return "it is not a keyed archive" }
        var check = Walk(objects: objects, allowed: allowed)
        for value in top.values {
            if let problem = check.visitReferences(in: value, depth: 0) { return problem }
        }
        return nil
    }

    /// The number a keyed archiver UID holds, or `nil` when `value` is no UID.
    static func uid(_ value: Any) -> Int? {
        guard isObject(value), String(describing: type(of: value)) == "_NSKeyedArchiverUID" else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let number = child.value as? UInt32 { return Int(number) }
            if let number = child.value as? UInt64 { return Int(exactly: number) }
            if let number = child.value as? Int { return number }
        }
        return nil
    }

    /// A walk of the object graph from the root, depth first, with an explicit record of
    /// the objects on the current path (a cycle) and of those already checked.
    private struct Walk {
        let objects: [Any]
        let allowed: [AnyClass]
        var onPath = Set<Int>()
        var checked = Set<Int>()
        var nesting = NestingGuard()

        init(objects: [Any], allowed: [AnyClass]) {
            self.objects = objects
            self.allowed = allowed
        }

        /// Checks every reference in `value` (a UID, or an array of them).
        mutating func visitReferences(in value: Any, depth: Int) -> String? {
            if let reference = KeyedArchiveCheck.uid(value) { return visit(reference, depth: depth) }
            if let array = value as? [Any] {
                for element in array {
                    if let problem = visitReferences(in: element, depth: depth) { return problem }
                }
            }
            return nil
        }

        mutating func visit(_ reference: Int, depth: Int) -> String? {
            guard objects.indices.contains(reference) else { return "it refers to object \(reference) of \(objects.count)" }
            if checked.contains(reference) { return nil }
            guard !onPath.contains(reference) else { return "it holds a reference cycle" }
            guard depth < NestingGuard.maximumContainers else { return "it nests deeper than \(NestingGuard.maximumContainers) objects" }
            guard nesting.tryEnter() else { return "it nests deeper than the stack allows" }
            defer { nesting.leave() }
            let object = objects[reference]
            guard let entry = object as? [String: Any] else {
                // A string, number or data stands for itself.
                guard TreeValue(object) != nil, !isArray(object) else { return "object \(reference) is not an object" }
                checked.insert(reference)
                return nil
            }
            guard let classReference = entry["$class"].flatMap(KeyedArchiveCheck.uid),
                objects.indices.contains(classReference),
                let classEntry = objects[classReference] as? [String: Any],
                let name = classEntry["$classname"] as? String
            else { return "object \(reference) does not name its class" }
            guard let type = NSClassFromString(name) as? NSObject.Type,
                allowed.contains(where: { type.isSubclass(of: $0) }),
                (type as? any NSSecureCoding.Type)?.supportsSecureCoding == true
            else { return "it holds a \(name), which is not allowed" }
            if let problem = Self.payloadProblem(entry, of: type) { return "its \(name) \(problem)" }
            onPath.insert(reference)
            defer { onPath.remove(reference) }
            for (key, value) in entry where key != "$class" {
                if let problem = visitReferences(in: value, depth: depth + 1) { return problem }
            }
            checked.insert(reference)
            return nil
        }

        /// What is wrong with the payload of a Foundation object, or `nil`.
        private static func payloadProblem(_ entry: [String: Any], of type: NSObject.Type) -> String? {
            func references(_ key: String) -> [Any]? {
                guard let array = entry[key] as? [Any], array.allSatisfy({ KeyedArchiveCheck.uid($0) != nil }) else { return nil }
                return array
            }
            if type.isSubclass(of: NSDictionary.self) {
                guard let keys = references("NS.keys"), let values = references("NS.objects") else { return "holds no keys and objects" }
                return keys.count == values.count ? nil : "holds \(keys.count) keys and \(values.count) objects"
            }
            if type.isSubclass(of: NSArray.self) || type.isSubclass(of: NSSet.self) {
                return references("NS.objects") == nil ? "holds no objects" : nil
            }
            if type.isSubclass(of: NSDate.self) {
                guard case .number(let number)? = TreeValue(entry["NS.time"] as Any), !number.isBool else { return "holds no time" }
                return nil
            }
            if type.isSubclass(of: NSString.self) {
                let text = entry["NS.string"].map { $0 is String } ?? false
                let bytes = entry["NS.bytes"].map { $0 is Data } ?? false
                return text || bytes ? nil : "holds no text"
            }
            if type.isSubclass(of: NSData.self) {
                let bytes = (entry["NS.data"] ?? entry["NS.bytes"]).map { $0 is Data } ?? false
                return bytes ? nil : "holds no bytes"
            }
            return nil
        }
    }
}
#endif
