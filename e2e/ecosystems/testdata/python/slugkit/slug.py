import re
import unicodedata


def slugify(text: str, sep: str = "-") -> str:
    """The slug of text: ASCII letters and digits, lower case, words joined by sep."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return sep.join(w.lower() for w in re.findall(r"[A-Za-z0-9]+", text))
