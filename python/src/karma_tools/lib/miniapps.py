"""The suite's mini-apps as a checkout holds them, the one list of them:
every folder miniapps/<app>/ with a CMakeLists.txt is one (CMake builds
each, miniapps/CMakeLists.txt), and one whose decks are in inputs/<app>/
takes a deck and writes karma results. The installed tools know those from
the results schema's `app` (core.APPS), which karma-docs writes from the
checkout (with_app_names), so adding a mini-app is adding its folder and
its decks."""

import json
import os
import re

from .core import ToolError

# The words of the results schema's `app` description that name the apps.
_NAMED = re.compile(r"^the mini-app: [^(]*?(?= \(|$)")


def built(root):
    """The mini-apps CMake builds, sorted: miniapps/<app>/CMakeLists.txt."""
    folder = os.path.join(root, "miniapps")
    return sorted(name for name in os.listdir(folder)
                  if os.path.isfile(os.path.join(folder, name, "CMakeLists.txt")))


def with_decks(root):
    """The mini-apps that take a deck and write karma results, sorted:
    those built that have inputs/<app>/."""
    return [app for app in built(root) if os.path.isdir(os.path.join(root, "inputs", app))]


def ordered(known, found):
    """`found` in the order of `known` (the list as it stands), new ones
    after them in name order: adding a mini-app moves no other."""
    return [a for a in known if a in found] + sorted(set(found) - set(known))


def named(apps):
    """'`a`, `b` or `c`'."""
    quoted = [f"`{a}`" for a in apps]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def with_app_names(text, apps, where):
    """The results schema's text (`where` names it) with its `app` enum and
    the names in its description those of `apps`, in their order as it
    lists them (ordered)."""
    schema = json.loads(text)
    app = schema.get("properties", {}).get("app", {})
    if not isinstance(app.get("enum"), list) or not _NAMED.match(app.get("description", "")):
        raise ToolError(f"{where}: properties.app: needs an enum and a description that "
                        "starts 'the mini-app: '", 2)
    app["enum"] = ordered(app["enum"], apps)
    app["description"] = _NAMED.sub("the mini-app: " + named(app["enum"]), app["description"])
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
