"""The test inputs' summary line: each argument's size at its largest, the cases, the values in all."""

from coderlm.collect.programs.inputs import describe


def test_lists_strings_and_numbers_at_their_largest():
    cases = [([2, 4, 3], "ab", 7), ([0], "abcdef", -300), ([9] * 7, "", 12)]
    assert describe(cases) == "# inputs: 3 cases; largest: list[7], str[6], int 300; 22 values in all"


def test_nested_lists_give_the_longest_inner_list_and_the_comment_sign_follows_the_language():
    grid = [[1, 2], [3, 4, 5], []]
    assert describe([(grid, ["ab", "abcd"])], "cpp") == (
        "// inputs: 1 case; largest: list[3][3], list[2][4]; 11 values in all"
    )


def test_nulls_and_mixed_kinds_describe_the_largest_value():
    assert describe([(None, True), ([1, 2], False)]) == "# inputs: 2 cases; largest: list[2], bool; 5 values in all"
    assert describe([]) == "# inputs: no cases"
