// Combine exists on Apple platforms only: there the coders plug into its operators.

#if canImport(Combine)
import Combine
import Foundation
import Testing
@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("TopLevelCoders")
struct TopLevelCodersTests {

    @Test("the coders work as Combine's TopLevelEncoder and TopLevelDecoder")
    func combine() throws {
        var received: [User] = []
        let cancellable = Just(User(id: 1, name: "Ada"))
            .encode(encoder: KeyValueEncoder())
            .map { $0 as Any }
            .decode(type: User.self, decoder: KeyValueDecoder())
            .sink(receiveCompletion: { _ in }, receiveValue: { received.append($0) })
        #expect(received == [User(id: 1, name: "Ada")])
        withExtendedLifetime(cancellable) {}
    }
}
#endif
