import difflib


def capitalised(query, response, reference, metadata):
    """1 for the word capitalised exactly; else up to 0.5 for how close it is, case ignored (a small policy
    learns from partial credit long before it gets the first answer exactly right)."""
    answer = response.strip()
    if answer == reference:
        return {"score": 1.0, "reason": "capitalised correctly"}
    close = difflib.SequenceMatcher(None, answer.lower(), reference.lower()).ratio()
    return {"score": 0.5 * close, "reason": f"{answer!r} is {close:.0%} like {reference!r}"}
