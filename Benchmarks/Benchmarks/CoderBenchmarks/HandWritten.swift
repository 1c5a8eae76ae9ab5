// The floor: the fastest correct conversion a person would write by hand.

import Foundation

struct HandWrittenError: Error {}

enum HandWritten {
    static func encode(_ address: Address) -> [String: Any] {
        ["street": address.street, "city": address.city, "zip": address.zip]
    }

    static func encode(_ user: User) -> [String: Any] {
        var dictionary: [String: Any] = [
            "id": user.id, "name": user.name, "email": user.email, "active": user.active,
            "score": user.score, "tags": user.tags, "address": encode(user.address), "created": user.created,
        ]
        if let nickname = user.nickname { dictionary["nickname"] = nickname }
        return dictionary
    }

    static func encode(_ users: [User]) -> [Any] { users.map { encode($0) } }

    static func decodeAddress(_ value: Any) throws -> Address {
        guard let d = value as? [String: Any], let street = d["street"] as? String,
            let city = d["city"] as? String, let zip = d["zip"] as? Int
        else { throw HandWrittenError() }
        return Address(street: street, city: city, zip: zip)
    }

    static func decodeUser(_ value: Any) throws -> User {
        guard let d = value as? [String: Any], let id = d["id"] as? Int, let name = d["name"] as? String,
            let email = d["email"] as? String, let active = d["active"] as? Bool,
            let score = d["score"] as? Double, let tags = d["tags"] as? [String],
            let address = d["address"], let created = d["created"] as? Date
        else { throw HandWrittenError() }
        let nickname: String?
        if let raw = d["nickname"] {
            guard let string = raw as? String else { throw HandWrittenError() }
            nickname = string
        } else {
            nickname = nil
        }
        return User(
            id: id, name: name, email: email, active: active, score: score, tags: tags,
            address: try decodeAddress(address), nickname: nickname, created: created)
    }

    static func decodeUsers(_ value: Any) throws -> [User] {
        guard let array = value as? [Any] else { throw HandWrittenError() }
        return try array.map(decodeUser)
    }

    static func encode(_ s: Settings) -> [String: Any] {
        var d: [String: Any] = [
            "theme": s.theme.rawValue, "fontSize": s.fontSize, "showsToolbar": s.showsToolbar,
            "launchCount": s.launchCount, "userName": s.userName, "homepage": s.homepage.absoluteString,
            "lastOpened": s.lastOpened, "recentFiles": s.recentFiles, "volume": Double(s.volume),
            "language": s.language, "retries": s.retries,
        ]
        if let signature = s.signature { d["signature"] = signature }
        return d
    }

    static func decodeSettings(_ value: Any) throws -> Settings {
        guard let d = value as? [String: Any],
            let themeRaw = d["theme"] as? String, let theme = Theme(rawValue: themeRaw),
            let fontSize = d["fontSize"] as? Double, let showsToolbar = d["showsToolbar"] as? Bool,
            let launchCount = d["launchCount"] as? Int, let userName = d["userName"] as? String,
            let homepageString = d["homepage"] as? String, let homepage = URL(string: homepageString),
            let lastOpened = d["lastOpened"] as? Date, let recentFiles = d["recentFiles"] as? [String],
            let volume = d["volume"] as? Double, let language = d["language"] as? String,
            let retries = d["retries"] as? Int
        else { throw HandWrittenError() }
        return Settings(
            theme: theme, fontSize: fontSize, showsToolbar: showsToolbar, launchCount: launchCount,
            userName: userName, homepage: homepage, lastOpened: lastOpened,
            signature: d["signature"] as? String, recentFiles: recentFiles, volume: Float(volume),
            language: language, retries: retries)
    }

    static func encode(_ ints: [Int]) -> [Any] { ints.map { $0 as Any } }
    static func decodeInts(_ value: Any) throws -> [Int] {
        guard let ints = value as? [Int] else { throw HandWrittenError() }
        return ints
    }

    static func encode(_ doubles: [String: Double]) -> [String: Any] { doubles.mapValues { $0 as Any } }
    static func decodeDoubles(_ value: Any) throws -> [String: Double] {
        guard let doubles = value as? [String: Double] else { throw HandWrittenError() }
        return doubles
    }

    static func encode(_ nested: Nested) -> [String: Any] {
        switch nested {
        case .leaf(let value): return ["leaf": ["_0": value]]
        case .node(let name, let child): return ["node": ["name": name, "child": encode(child)] as [String: Any]]
        }
    }

    static func decodeNested(_ value: Any) throws -> Nested {
        guard let d = value as? [String: Any] else { throw HandWrittenError() }
        if let leaf = d["leaf"] as? [String: Any], let v = leaf["_0"] as? Int { return .leaf(v) }
        guard let node = d["node"] as? [String: Any], let name = node["name"] as? String, let child = node["child"] else {
            throw HandWrittenError()
        }
        return .node(name: name, child: try decodeNested(child))
    }
}
