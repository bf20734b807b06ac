from slugkit import slugify


def test_words_are_joined():
    assert slugify("Hello, World!") == "hello-world"


def test_accents_are_dropped():
    assert slugify("Crème brûlée") == "creme-brulee"


def test_separator():
    assert slugify("a b c", sep="_") == "a_b_c"
