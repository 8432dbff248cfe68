"""Registers pulp:signing's services with the key imported into $GNUPGHOME (importKey.sh).

Run by `pulpcore-manager shell` in the Job <instance>-signing-services. A service that is missing is created; one
whose key or script differs is updated in place, after the new key passed the class's own validate() (a test
signature checked against the public key): pulpcore keeps services immutable (a BEFORE_UPDATE hook refuses a
save), but a new service would leave every repository on the old one (pulp-operator #1608), and removing the
old one fails while repositories use it. QuerySet.update() keeps the name and primary key, so repositories
keep their service and the next publication signs with the new key. A service of that name but another class
is left alone and fails the Job, with what to do.
"""
import json
import os
import subprocess
import sys

from django.apps import apps
from django.utils import timezone

from pulpcore.app.models.content import SigningService


def gpg(*args):
    return subprocess.run(["gpg", "--batch", *args], capture_output=True, text=True, check=True).stdout


listing = gpg("--with-colons", "--list-secret-keys").splitlines()
fingerprint = next(line.split(":")[9] for line in listing if line.startswith("fpr:"))
public_key = gpg("--armor", "--export", fingerprint)
failed = []
for service in json.loads(os.environ["SIGNING_SERVICES"]):
    name, class_name, script = service["name"], service["class"], service["script"]
    app_label, model_name = class_name.split(":")
    try:
        model = apps.get_model(app_label, model_name)
    except LookupError:
        failed.append(f"{name}: the image has no {class_name} (is the {app_label} plugin installed?)")
        continue
    wanted = {"public_key": public_key, "pubkey_fingerprint": fingerprint, "script": script}
    existing = model.objects.filter(name=name).first()
    if existing is None and SigningService.objects.filter(name=name).exists():
        failed.append(
            f"{name}: a signing service of another class has this name. Give pulp:signing's service "
            f"another name, or remove the old one if no repository uses it: "
            f"pulpcore-manager remove-signing-service {name}"
        )
        continue
    candidate = model(name=name, **wanted)
    if existing is not None and all(getattr(existing, k) == v for k, v in wanted.items()):
        print(f"{name}: unchanged ({class_name}, key {fingerprint})")
        continue
    try:
        candidate.validate()
    except Exception as e:  # the class's own check: its message says what the script returned
        failed.append(f"{name}: the script did not pass {class_name}'s check: {e}")
        continue
    if existing is None:
        candidate.save()
        print(f"{name}: created ({class_name}, key {fingerprint})")
    else:
        SigningService.objects.filter(pk=existing.pk).update(pulp_last_updated=timezone.now(), **wanted)
        print(f"{name}: updated in place to key {fingerprint} (was {existing.pubkey_fingerprint})")
if failed:
    sys.exit("Signing services not registered:\n  " + "\n  ".join(failed))
