import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("KeyConversion")
struct KeyConversionTests {

    // The rows of swift-foundation's JSONEncoderTests `testEncodingKeyStrategySnake`,
    // and a few of this package's.
    @Test(
        "convert to snake case, as Foundation does",
        arguments: [
            ("simpleOneTwo", "simple_one_two"),
            ("myURL", "my_url"),
            ("singleCharacterAtEndX", "single_character_at_end_x"),
            ("thisIsAnXMLProperty", "this_is_an_xml_property"),
            ("single", "single"),
            ("", ""),
            ("a", "a"),
            ("aA", "a_a"),
            ("version4Thing", "version4_thing"),
            ("partCAPS", "part_caps"),
            ("partCAPSLowerAGAIN", "part_caps_lower_again"),
            ("manyWordsInThisThing", "many_words_in_this_thing"),
            ("asdfĆqer", "asdf_ćqer"),
            ("already_snake_case", "already_snake_case"),
            ("dataPoint22", "data_point22"),
            ("dataPoint22Word", "data_point22_word"),
            ("_oneTwoThree", "_one_two_three"),
            ("oneTwoThree_", "one_two_three_"),
            ("__oneTwoThree", "__one_two_three"),
            ("oneTwoThree__", "one_two_three__"),
            ("_oneTwoThree_", "_one_two_three_"),
            ("__oneTwoThree__", "__one_two_three__"),
            ("_test", "_test"),
            ("_test_", "_test_"),
            ("__test", "__test"),
            ("test__", "test__"),
            ("🐧🐟", "🐧🐟"),
            ("myGreatURLRequest", "my_great_url_request"),
            ("URLValue", "u_rl_value"),  // Foundation assumes a lowercase first letter
            ("a-B", "a-_b"),
        ])
    func snakeCase(input: String, expected: String) {
        #expect(convertToSnakeCase(input) == expected)
    }

    // The rows of swift-foundation's JSONEncoderTests `testDecodingKeyStrategyCamel`,
    // and a few of this package's.
    @Test(
        "convert from snake case, as Foundation does",
        arguments: [
            ("", ""),
            ("a", "a"),
            ("ALLCAPS", "ALLCAPS"),
            ("ALL_CAPS", "allCaps"),
            ("single", "single"),
            ("snake_case", "snakeCase"),
            ("one_two_three", "oneTwoThree"),
            ("one_2_three", "one2Three"),
            ("one2_three", "one2Three"),
            ("snake_Ćase", "snakeĆase"),
            ("_snake_case", "_snakeCase"),
            ("__snake_case", "__snakeCase"),
            ("snake_case_", "snakeCase_"),
            ("snake_case__", "snakeCase__"),
            ("_snake_case_", "_snakeCase_"),
            ("__snake_case__", "__snakeCase__"),
            ("_", "_"),
            ("__", "__"),
            ("___", "___"),
            ("snake_case_with_🐧", "snakeCaseWith🐧"),
            ("my_url_property", "myUrlProperty"),
            ("__both__", "__both__"),
            ("camelCase", "camelCase"),
        ])
    func fromSnakeCase(input: String, expected: String) {
        #expect(convertFromSnakeCase(input) == expected)
    }
}
