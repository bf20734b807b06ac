"""slugkit: URL slugs from titles."""
from slugkit.slug import slugify

__all__ = ["slugify"]
