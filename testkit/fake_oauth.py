"""Fake GitHub and Google OAuth servers: real HTTP on a free local port, speaking the
authorization-code flow the way each provider documents it, for sign-in tests.

Both:

* ``GET <authorize>?client_id&redirect_uri&scope&state&response_type=code`` (PKCE's
  ``code_challenge`` too, when sent): the person "approves" at once, and the answer is a 302
  to ``redirect_uri?code=...&state=...``; an unknown client gets 400.
* ``POST <token>`` (form: ``grant_type=authorization_code``, ``code``, ``redirect_uri``,
  ``client_id``, ``client_secret``, ``code_verifier`` with PKCE): a code is good once, for the
  client and redirect it was issued to; anything else is ``{"error": "bad_verification_code"}``
  (GitHub, 200 as GitHub does) or ``{"error": "invalid_grant"}`` (Google, 400).

GitHub (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps;
GitHub Enterprise paths, which allauth uses when ``GITHUB_URL`` is set):
``/login/oauth/authorize``, ``/login/oauth/access_token`` (form-encoded answer unless asked
for JSON), ``/api/v3/user`` and ``/api/v3/user/emails`` with ``Authorization: token ...``.

Google (https://developers.google.com/identity/protocols/oauth2/openid-connect):
``/o/oauth2/v2/auth``, ``/token`` (the answer carries an ``id_token``, a JWT signed RS256 with
this server's key), ``/oauth2/v2/userinfo`` with ``Authorization: Bearer ...``, and the keys
at ``/oauth2/v1/certs`` (``{kid: PEM certificate}``) and ``/oauth2/v3/certs`` (JWKS).

The profile each serves is deliberately full (name, avatar, location...): what a sign-in
keeps of it is what the tests check. ``requests`` logs every request (method, path, headers).
"""

from __future__ import annotations

import base64
import copy
import datetime
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from testkit.local_http import LocalHTTPService


@dataclass
class Person:
    """Who signs in at the fake provider."""

    id: str
    email: str
    verified: bool = True
    name: str = "Ada Lovelace"
    extra: dict[str, Any] = field(default_factory=dict)
    other_emails: list[str] = field(default_factory=list)  # GitHub lists every address


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    scope: str
    challenge: str | None


class _FakeOAuth(LocalHTTPService):
    authorize_path = ""
    token_path = ""
    bad_code_status, bad_code_error = 400, "invalid_grant"

    def __init__(self, person: Person, *, client_id: str | None = None,
                 client_secret: str | None = None) -> None:
        self.person = person
        self.client_id = client_id or f"client-{secrets.token_hex(6)}"
        self.client_secret = client_secret or secrets.token_urlsafe(24)
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.scopes: list[str] = []  # what each authorization asked for
        self._codes: dict[str, _Grant] = {}
        self._tokens: set[str] = set()
        self._lock = threading.Lock()

    # -- the flow -------------------------------------------------------------------------------
    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(h.path)
        with self._lock:
            self.requests.append((method, url.path, {k.lower(): v for k, v in h.headers.items()}))
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if method == "GET" and url.path == self.authorize_path:
            self._authorize(h, query)
        elif method == "POST" and url.path == self.token_path:
            length = int(h.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(h.rfile.read(length).decode()).items()}
            self._token(h, form)
        elif method == "GET" and (answer := self.resource(url.path)) is not None:
            if not self._bearer_ok(h):
                self.send_json(h, 401, {"message": "Bad credentials"})
            else:
                self.send_json(h, 200, answer)
        else:
            self.send_json(h, 404, {"message": "Not Found"})

    def _authorize(self, h: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        if query.get("client_id") != self.client_id or not query.get("redirect_uri") or \
                query.get("response_type") != "code":
            self.send_json(h, 400, {"error": "invalid_request"})
            return
        code = secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = _Grant(self.client_id, query["redirect_uri"],
                                       query.get("scope", ""), query.get("code_challenge"))
            self.scopes.append(query.get("scope", ""))
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        separator = "&" if "?" in query["redirect_uri"] else "?"
        h.send_response(302)
        h.send_header("Location", f"{query['redirect_uri']}{separator}{urlencode(back)}")
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _token(self, h: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)  # good once
        if (grant is None or form.get("grant_type") != "authorization_code"
                or form.get("client_id") != grant.client_id
                or form.get("client_secret") != self.client_secret
                or form.get("redirect_uri") != grant.redirect_uri
                or not _pkce_ok(grant.challenge, form.get("code_verifier"))):
            self.send_json(h, self.bad_code_status, {"error": self.bad_code_error})
            return
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens.add(token)
        self.send_token(h, token, grant)

    def _bearer_ok(self, h: BaseHTTPRequestHandler) -> bool:
        scheme, _, token = (h.headers.get("Authorization") or "").partition(" ")
        with self._lock:
            return scheme.lower() in {"token", "bearer"} and token in self._tokens

    # -- per provider ---------------------------------------------------------------------------
    def resource(self, path: str) -> Any:
        raise NotImplementedError

    def send_token(self, h: BaseHTTPRequestHandler, token: str, grant: _Grant) -> None:
        raise NotImplementedError


class FakeGitHub(_FakeOAuth):
    authorize_path = "/login/oauth/authorize"
    token_path = "/login/oauth/access_token"
    bad_code_status, bad_code_error = 200, "bad_verification_code"  # GitHub answers 200

    def send_token(self, h: BaseHTTPRequestHandler, token: str, grant: _Grant) -> None:
        answer = {"access_token": token, "scope": grant.scope.replace(" ", ","),
                  "token_type": "bearer"}
        if "application/json" in (h.headers.get("Accept") or ""):
            self.send_json(h, 200, answer)
        else:  # GitHub's default: form-encoded
            _send(h, 200, urlencode(answer).encode(), "application/x-www-form-urlencoded")

    def resource(self, path: str) -> Any:
        p = self.person
        if path == "/api/v3/user":
            login = p.email.split("@")[0]
            return {"login": login, "id": int(p.id), "node_id": f"MDQ6VXNlcj{p.id}",
                    "avatar_url": f"https://avatars.example.com/u/{p.id}",
                    "html_url": f"https://github.example.com/{login}", "type": "User",
                    "name": p.name, "company": "Analytical Engines", "blog": "",
                    "location": "London", "email": None, "bio": "Poet of numbers.",
                    "public_repos": 3, "followers": 10, "following": 1,
                    "created_at": "2011-01-25T18:44:36Z", **p.extra}
        if path == "/api/v3/user/emails":
            return [{"email": p.email, "primary": True, "verified": p.verified,
                     "visibility": "private"},
                    *({"email": other, "primary": False, "verified": True, "visibility": None}
                      for other in p.other_emails)]
        return None


class FakeGoogle(_FakeOAuth):
    authorize_path = "/o/oauth2/v2/auth"
    token_path = "/token"
    issuer = "https://accounts.google.com"

    def __init__(self, person: Person, **kwargs: Any) -> None:
        super().__init__(person, **kwargs)
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(20)

    def claims(self) -> dict[str, Any]:
        p, now = self.person, int(time.time())
        return {"iss": self.issuer, "azp": self.client_id, "aud": self.client_id, "sub": p.id,
                "email": p.email, "email_verified": p.verified, "at_hash": "fake",
                "name": p.name, "given_name": p.name.split()[0],
                "family_name": p.name.split()[-1], "locale": "en",
                "picture": f"https://lh3.example.com/a/{p.id}", "iat": now, "exp": now + 3600,
                **p.extra}

    def id_token(self) -> str:
        import jwt

        return jwt.encode(self.claims(), self.key, algorithm="RS256",
                          headers={"kid": self.kid})

    def send_token(self, h: BaseHTTPRequestHandler, token: str, grant: _Grant) -> None:
        answer = {"access_token": token, "expires_in": 3599, "token_type": "Bearer",
                  "scope": grant.scope}
        if "openid" in grant.scope.split():
            answer["id_token"] = self.id_token()
        self.send_json(h, 200, answer)

    def resource(self, path: str) -> Any:
        p = self.person
        if path == "/oauth2/v2/userinfo":
            return {"id": p.id, "email": p.email, "verified_email": p.verified,
                    "name": p.name, "given_name": p.name.split()[0],
                    "family_name": p.name.split()[-1],
                    "picture": f"https://lh3.example.com/a/{p.id}", "locale": "en"}
        return None

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        path = urlsplit(h.path).path
        if method == "GET" and path == "/oauth2/v1/certs":  # public, no token
            self.send_json(h, 200, {self.kid: self.certificate_pem()})
        elif method == "GET" and path == "/oauth2/v3/certs":
            self.send_json(h, 200, {"keys": [self.jwk()]})
        else:
            super().handle(h, method)

    def certificate_pem(self) -> str:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import NameOID

        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-google")])
        now = datetime.datetime.now(datetime.UTC)
        certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                       .public_key(self.key.public_key()).serial_number(1)
                       .not_valid_before(now - datetime.timedelta(days=1))
                       .not_valid_after(now + datetime.timedelta(days=1))
                       .sign(self.key, hashes.SHA256()))
        return certificate.public_bytes(serialization.Encoding.PEM).decode()

    def jwk(self) -> dict[str, str]:
        numbers = self.key.public_key().public_numbers()
        return {"kty": "RSA", "alg": "RS256", "use": "sig", "kid": self.kid,
                "n": _b64_int(numbers.n), "e": _b64_int(numbers.e)}


def _pkce_ok(challenge: str | None, verifier: str | None) -> bool:
    """RFC 7636's S256: the challenge sent to authorize is the verifier's hash."""
    if challenge is None:
        return True
    if not verifier:
        return False
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == challenge


def _b64_int(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _send(h: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str) -> None:
    h.send_response(status)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def sign_in_through(settings, monkeypatch, *fakes: _FakeOAuth) -> None:
    """Configure allauth for ``fakes`` as the environment would (GITHUB_CLIENT_ID/SECRET,
    ARENA_GITHUB_URL; GOOGLE_..., ARENA_GOOGLE_URL): the provider settings, the fakes' origins
    in the Content-Security-Policy's form-action, and the endpoint
    URLs allauth's adapters derive from those settings once, when their module is imported
    (before any test's fake had a port). That the variables reach those attributes in a fresh
    process is tested on its own (accounts/tests/test_oauth.py)."""
    from allauth.socialaccount.providers.github.views import GitHubOAuth2Adapter
    from allauth.socialaccount.providers.google import views as google

    providers = {}
    for fake in fakes:
        app = {"APPS": [{"client_id": fake.client_id, "secret": fake.client_secret, "key": ""}]}
        base = fake.base_url
        if isinstance(fake, FakeGitHub):
            providers["github"] = {"SCOPE": ["read:user", "user:email"], "GITHUB_URL": base, **app}
            for name, value in (("web_url", base), ("api_url", f"{base}/api/v3"),
                                ("authorize_url", f"{base}/login/oauth/authorize"),
                                ("access_token_url", f"{base}/login/oauth/access_token"),
                                ("profile_url", f"{base}/api/v3/user"),
                                ("emails_url", f"{base}/api/v3/user/emails")):
                monkeypatch.setattr(GitHubOAuth2Adapter, name, value)
        else:
            providers["google"] = {"SCOPE": ["openid", "email"], **app}
            monkeypatch.setattr(google, "CERTS_URL", f"{base}/oauth2/v1/certs")
            for name, value in (("authorize_url", f"{base}/o/oauth2/v2/auth"),
                                ("access_token_url", f"{base}/token"),
                                ("identity_url", f"{base}/oauth2/v2/userinfo")):
                monkeypatch.setattr(google.GoogleOAuth2Adapter, name, value)
    settings.SOCIALACCOUNT_PROVIDERS = providers
    policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
    policy["DIRECTIVES"]["form-action"] += [fake.base_url for fake in fakes]
    settings.CONTENT_SECURITY_POLICY = policy
