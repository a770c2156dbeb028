"""``parse_patch``: diff text to changed files and line ranges; malformed and oversized text
refused with a typed error naming the line at fault."""

from __future__ import annotations

import pytest

from mapper.impact import (
    MalformedPatchError,
    PatchLimits,
    PatchTooLargeError,
    UnsafePathError,
    parse_patch,
)
from mapper.impact.patch_types import FileChange

MODIFIED = """\
diff --git a/fx/kmd/device.py b/fx/kmd/device.py
index 1111111..2222222 100644
--- a/fx/kmd/device.py
+++ b/fx/kmd/device.py
@@ -8,4 +8,5 @@ class Device:
     def free(self, va: int) -> None:
-        del self.blocks[va]
+        if va in self.blocks:
+            del self.blocks[va]

     def used(self) -> int:
@@ -20,0 +22,1 @@
+# trailing note
"""


def test_context_hunks_give_only_the_changed_lines() -> None:
    patch = parse_patch(MODIFIED)
    assert patch.files == (
        FileChange("fx/kmd/device.py", "modified", ((9, 9), (20, 20)), ((9, 10), (22, 22))),
    )
    assert (patch.prefixed, patch.hunks) == (True, 2)


def test_zero_context_output_of_git_diff() -> None:
    text = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -3,2 +2,0 @@\n-a\n-b\n@@ -10 +9 @@\n-c\n+d\n"
    )
    assert parse_patch(text).files == (
        FileChange("x.py", "modified", ((3, 4), (10, 10)), ((2, 2), (9, 9))),
    )


def test_a_form_feed_in_a_line_is_content_not_a_line_break() -> None:
    text = (
        "diff --git a/COPYING b/COPYING\n--- a/COPYING\n+++ b/COPYING\n@@ -1,0 +2,2 @@\n+\x0c\n+x\n"
    )
    assert parse_patch(text).files == (FileChange("COPYING", "modified", ((1, 1),), ((2, 3),)),)


def test_new_deleted_and_renamed_files() -> None:
    text = """\
diff --git a/fx/new.py b/fx/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/fx/new.py
@@ -0,0 +1,2 @@
+def made() -> int:
+    return 1
diff --git a/fx/old.py b/fx/old.py
deleted file mode 100644
index 4444444..0000000
--- a/fx/old.py
+++ /dev/null
@@ -1,3 +0,0 @@
-def gone() -> None:
-    pass
-
diff --git a/fx/umd/session.py b/fx/umd/sessions.py
similarity index 90%
rename from fx/umd/session.py
rename to fx/umd/sessions.py
index 5555555..6666666 100644
--- a/fx/umd/session.py
+++ b/fx/umd/sessions.py
@@ -4 +4 @@ class Session:
-    x = 1
+    x = 2
diff --git a/fx/a b.py b/fx/c d.py
similarity index 100%
rename from fx/a b.py
rename to fx/c d.py
"""
    assert parse_patch(text).files == (
        FileChange("fx/new.py", "added", ((1, 1),), ((1, 2),)),
        FileChange("fx/old.py", "deleted", ((1, 3),), ((1, 1),)),
        FileChange("fx/umd/sessions.py", "renamed", ((4, 4),), ((4, 4),), "fx/umd/session.py"),
        FileChange("fx/c d.py", "renamed", (), (), "fx/a b.py"),
    )


def test_binary_files_have_a_status_and_no_ranges() -> None:
    text = """\
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..7777777
Binary files /dev/null and b/logo.png differ
diff --git a/blob.bin b/blob.bin
index 8888888..9999999 100644
GIT binary patch
literal 5
McmZQzWMXCj00962

literal 3
KcmZQzU|;|M00RI3

"""
    assert parse_patch(text).files == (
        FileChange("logo.png", "added", (), (), None, True),
        FileChange("blob.bin", "modified", (), (), None, True),
    )


def test_plain_unified_diff_without_prefixes_and_a_mail_preamble() -> None:
    text = (
        "From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] tweak\n\n---\n x.py | 2 +-\n\n"
        "--- x.py\t2026-01-01 10:00:00\n+++ x.py\t2026-01-02 10:00:00\n"
        "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
        '--- "q\\tuoted.py"\n+++ "q\\tuoted.py"\n@@ -2,0 +3 @@\n+c\n'
    )
    patch = parse_patch(text)
    assert patch.files == (
        FileChange("x.py", "modified", ((1, 1),), ((1, 1),)),
        FileChange("q\tuoted.py", "modified", ((2, 2),), ((3, 3),)),
    )
    assert patch.prefixed is False


def test_crlf_line_ends_read_like_lf() -> None:
    assert parse_patch(MODIFIED.replace("\n", "\r\n")).files == parse_patch(MODIFIED).files


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("", "the patch is empty", None),
        ("just some words\nnot a diff\n", "no file header found", None),
        ("@@ -1 +1 @@\n-a\n+b\n", "hunk outside a file", 1),
        ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n", "hunk ends early", 3),
        ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n-b\n+c\n", "disagrees with its header", 5),
        ("--- a/x.py\n+++ b/x.py\n@@ -one +1 @@\n", "malformed header", 3),
        ('--- "a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n', "unterminated quoted path", 1),
    ],
)
def test_malformed_patch_is_a_typed_error_with_its_line(
    text: str, message: str, line: int | None
) -> None:
    with pytest.raises(MalformedPatchError, match=message) as caught:
        parse_patch(text)
    assert caught.value.line == line


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "fx/../../outside.py"])
def test_paths_leaving_the_repository_are_refused(path: str) -> None:
    text = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n".replace("a//", "/").replace(
        "b//", "/"
    )
    with pytest.raises(UnsafePathError, match="leaves the repository"):
        parse_patch(text)


def test_oversized_patches_are_refused_before_reading() -> None:
    hunk = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(PatchTooLargeError, match="the patch is 1040 bytes; at most 1000") as big:
        parse_patch(hunk * 26, PatchLimits(max_bytes=1000))
    assert big.value.details == {"limit": "max_bytes", "size": 1040}
    files = "".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-a\n+b\n" for i in range(4))
    with pytest.raises(PatchTooLargeError, match="more than 3 files") as many:
        parse_patch(files, PatchLimits(max_files=3))
    assert (many.value.line, many.value.details["size"]) == (16, 4)
    hunks = "--- a/x.py\n+++ b/x.py\n" + "".join(f"@@ -{i} +{i} @@\n-a\n+b\n" for i in range(1, 5))
    with pytest.raises(PatchTooLargeError, match="more than 3 hunks"):
        parse_patch(hunks, PatchLimits(max_hunks=3))
    assert len(parse_patch(files, PatchLimits(max_files=4)).files) == 4
