// How the encoder writes each kind of value: the metatype checks first, then numbers,
// strings, dates, data, URLs, and collections, each with its strategy.

import Foundation

extension EncoderImpl {
    /// Encodes `value`, which sits `step` below the container at `parent`, and returns
    /// its tree, or `nil` for an encoded `nil`.
    func box<T: Encodable>(_ value: T, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Any? {
        // Metatype checks first: they cost a pointer compare and skip `encode(to:)`.
        if T.self == String.self { return string(sameType(value, as: String.self)) }
        if T.self == Int.self { return sameType(value, as: Int.self) }
        if T.self == Double.self { return sameType(value, as: Double.self) }
        if T.self == Bool.self { return sameType(value, as: Bool.self) }
        if modelTypes.contains(T.self) { return try boxEncodable(value, parent: parent, step: step()) }
        // The other leaves before the collections: their metatypes need no look-up.
        if T.self == Date.self { return try boxDate(sameType(value, as: Date.self), parent: parent, step: step()) }
        if T.self == URL.self { return try boxURL(sameType(value, as: URL.self), parent: parent, step: step()) }
        if T.self == Data.self { return try boxData(sameType(value, as: Data.self), parent: parent, step: step()) }
        if T.self == Decimal.self {
            let step = step()
            return try form.decimal(sameType(value, as: Decimal.self)) { levels.codingPath(of: parent, then: step) }
        }
        // Homogeneous arrays and String-keyed dictionaries of plist primitives are
        // already a valid tree, unless they would sit deeper than the form allows (the
        // long way then throws with the path).
        if allowsNesting(below: parent) {
            if T.self == PrimitiveArrays.strings {
                let strings = sameType(value, as: [String].self)
                return writesStringsAsTheyAre ? strings : form.strings(strings)
            }
            if T.self == PrimitiveArrays.ints || T.self == PrimitiveArrays.doubles || T.self == PrimitiveArrays.bools {
                return value
            }
            if T.self == PrimitiveDictionaries.strings,
                let whole = form.primitiveDictionary(value, strings: sameType(value, as: [String: String].self))
            {
                return whole
            }
            if T.self == PrimitiveDictionaries.ints || T.self == PrimitiveDictionaries.doubles || T.self == PrimitiveDictionaries.bools,
                let whole = form.primitiveDictionary(value, strings: nil)
            {
                return whole
            }
        }
        if wrapsOptionals, let optional = value as? any WrappableOptional {
            return try optional.box(into: self, parent: parent, step: step())
        }
        if convertsKeys, let dictionary = value as? any StringKeyedDictionary {
            return try dictionary.boxEntries(into: self, parent: parent, step: step())
        }
        // Every compare above but the pass-through ones depends on the type alone. The
        // root value is written once, and not worth remembering.
        if parent != nil && !isPassedThrough(T.self) { modelTypes.remember(T.self) }
        return try boxEncodable(value, parent: parent, step: step())
    }

    /// A `[String: V]`, whose keys are data: the key strategy leaves them as they are,
    /// as in Foundation's coders.
    func boxDictionary<Value: Encodable>(_ dictionary: [String: Value], parent: CodingPathNode?, step: PathStep?) throws -> Any {
        try nesting.enter { EncodingError.tooDeep(dictionary, $0, in: levels, at: parent, step) }
        let height = levels.height
        defer {
            levels.pop(to: height)
            nesting.leave()
        }
        let node = levels.appending(step, to: parent)
        if !allowsContainer(at: node) {
            throw EncodingError.invalid(dictionary, form.depthProblem, in: levels, at: parent, step)
        }
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            if let problem = form.problem(withKey: key).map(form.message(for:)) {
                throw EncodingError.invalid(value, problem, in: levels, at: node, .key(KeyValueCodingKey(stringValue: key)))
            }
            if let boxed = try box(value, parent: node, step: .key(KeyValueCodingKey(stringValue: key))) {
                result.setEntry(boxed, forKey: key)
            } else if let null = form.null {
                result.setEntry(null, forKey: key)
            }
        }
        return result
    }

    /// Runs `value.encode(to:)` with this encoder one level down, and flattens what it wrote.
    private func boxEncodable<T: Encodable>(_ value: T, parent: CodingPathNode?, step: consuming PathStep?) throws -> Any? {
        // The value being encoded was already misused (a container past the depth
        // limit): going on into its children would recurse until the stack ends, and
        // report a reference cycle as the stack's fault rather than the nesting's.
        if misuse != nil { throw misused(value) }
        try nesting.enter { EncodingError.tooDeep(value, $0, in: levels, at: parent, step) }
        // The levels this value's containers push are dropped once it is flattened.
        let height = levels.height
        // The state is swapped in and out, not copied: a step holds an existential
        // key, and each copy of one (and each test of its optional) is a call through
        // the key type's value witnesses. Each `other…` holds the state the encoder
        // does not: this value's until the first swap, then the outer value's.
        var otherParent = parent
        var otherStep = step
        var otherSlot = Slot.empty
        var otherMisuse: CoderMisuse?
        swap(&self.parent, &otherParent)
        swap(&self.step, &otherStep)
        swap(&self.slot, &otherSlot)
        swap(&self.misuse, &otherMisuse)
        // The outer value's single tree, when it has one, waits here too: a container
        // kept from another value may still encode into this encoder.
        var otherSingle: Any?
        if case .value = otherSlot { swap(&self.single, &otherSingle) }
        defer {
            swap(&self.parent, &otherParent)
            swap(&self.step, &otherStep)
            swap(&self.slot, &otherSlot)
            swap(&self.misuse, &otherMisuse)
            if case .value = self.slot { swap(&self.single, &otherSingle) }
            levels.pop(to: height)
            nesting.leave()
        }
        try value.encode(to: self)
        if misuse != nil { throw misused(value) }
        return try finishSlot()
    }

    /// The error for the misuse of the value being encoded. Not inlined: its locals would
    /// grow the frame of every level of `boxEncodable`, and so how deep the stack lets a
    /// value go (several hundred bytes a level under AddressSanitizer).
    @inline(never)
    private func misused<T>(_ value: T) -> EncodingError {
        EncodingError.invalid(value, misuse?.message ?? "", at: codingPath)
    }

    /// Flattens what the current value wrote, and clears it.
    private func finishSlot() throws -> Any? {
        var written = Slot.empty
        swap(&slot, &written)
        switch consume written {
        case .empty:
            // As JSONEncoder does: a value that writes nothing is an empty dictionary.
            return [String: Any]()
        case .value:
            return single.take()
        case .keyed(let storage):
            let result = try storage.finish(self)
            // Moved, not copied, into the pool: each copy is a retain and a release.
            var pooled = consume storage
            if isKnownUniquelyReferenced(&pooled) { keyedPool.append(consume pooled) }
            return result
        case .unkeyed(let storage):
            let result = try storage.finish(self)
            var pooled = consume storage
            if isKnownUniquelyReferenced(&pooled) { unkeyedPool.append(consume pooled) }
            return result
        }
    }

    /// The tree of a nested container or super encoder, once its parent is complete.
    func resolve(_ item: Pending) throws -> Any? {
        switch item {
        case .keyed(let storage):
            return try storage.finish(self)
        case .unkeyed(let storage):
            return try storage.finish(self)
        case .encoder(let encoder):
            if let misuse = encoder.misuse {
                throw EncodingError.invalid(Optional<Any>.none as Any, misuse.message, at: encoder.codingPath)
            }
            return try encoder.finishSlot()
        }
    }

    private func boxDate(_ date: Date, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.dateEncodingStrategy {
        case .date:
            return form.date(date)
        case .secondsSince1970:
            return date.timeIntervalSince1970
        case .millisecondsSince1970:
            return date.timeIntervalSince1970 * 1000
        case .iso8601(let fractional):
            // The text must read back as this date, to the strategy's precision: a NaN
            // or infinite date, or one outside the years ISO 8601 writes, does not.
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: fractional)
            let text = date.formatted(style)
            guard let back = try? style.parse(text), Self.isSameDate(back, date, within: fractional ? 0.001 : 1) else {
                throw EncodingError.unwritableDate(date, strategy: ".iso8601", text: text, in: levels, at: parent, step)
            }
            return form.string(text)
        case .formatted(let formatter):
            // A format may keep less than the date (a day, say), but what it reads back
            // must be the same date to within a year: a format without the era, or with
            // two-digit years, reads another date outside its range.
            let text = formatter.string(from: date)
            guard let back = formatter.date(from: text), Self.isSameDate(back, date, within: 366 * 86_400) else {
                throw EncodingError.unwritableDate(date, strategy: ".formatted", text: text, in: levels, at: parent, step)
            }
            return form.string(text)
        case .custom(let closure):
            return try custom(date, parent: parent, step: step) { try closure(date) }
        }
    }

    /// Whether `a` and `b` are the same date to within `precision` seconds; never for a
    /// date that is not finite.
    private static func isSameDate(_ a: Date, _ b: Date, within precision: Double) -> Bool {
        let difference = abs(a.timeIntervalSinceReferenceDate - b.timeIntervalSinceReferenceDate)
        return difference.isFinite && difference < precision
    }

    private func boxURL(_ url: URL, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.urlEncodingStrategy {
        case .url:
            return try form.url(url, depth: depth(parent, step)) { levels.codingPath(of: parent, then: step) }
        case .absoluteString:
            return form.string(url.absoluteString)
        case .custom(let closure):
            return try custom(url, parent: parent, step: step) { try closure(url) }
        }
    }

    private func boxData(_ data: Data, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.dataEncodingStrategy {
        case .data:
            return data
        case .base64:
            return form.string(data.base64EncodedString())
        case .custom(let closure):
            return try custom(data, parent: parent, step: step) { try closure(data) }
        }
    }

    /// Runs a `.custom` strategy closure for `value`, and has the form check what it made.
    private func custom(_ value: Any, parent: CodingPathNode?, step: PathStep?, _ closure: () throws -> Any) throws -> Any {
        let output = try runCustomStrategy(closure) { error in
            EncodingError.invalid(value, "Custom strategy failed", in: levels, at: parent, step, underlyingError: error)
        }
        return try form.custom(output, depth: depth(parent, step)) { levels.codingPath(of: parent, then: step) }
    }

    /// How many containers the value `step` below the container at `node` sits in.
    private func depth(_ node: CodingPathNode?, _ step: PathStep?) -> Int {
        (node?.depth ?? 0) + (step == nil ? 0 : 1)
    }
}

// MARK: - Optionals

/// Lets a form that writes `Optional` values itself see each level of a nested optional.
private protocol WrappableOptional {
    func box(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any
}

extension Optional: WrappableOptional where Wrapped: Encodable {
    fileprivate func box(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        guard let wrapped = self else { return encoder.form.none }
        return encoder.form.wrapSome(try encoder.box(wrapped, parent: parent, step: step))
    }
}

// MARK: - Dictionaries with String keys

/// `[String: V]`, found by a cast where a key strategy must leave its keys alone.
private protocol StringKeyedDictionary {
    func boxEntries(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func boxEntries(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        try encoder.boxDictionary(self, parent: parent, step: step)
    }
}
