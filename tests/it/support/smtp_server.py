"""A real SMTP server on loopback for kerf's tests (aiosmtpd, Debian python3-aiosmtpd).

Usage: smtp_server.py [--user U --password P] [--cert PEM --key PEM [--implicit-tls]]
Prints {"port": N} once listening, then one JSON line per accepted message:
{"mailFrom", "rcptTos", "subject", "messageId", "text", "html", "login", "tls"}.
With --cert/--key it offers STARTTLS and requires it before MAIL, or, with
--implicit-tls, speaks TLS from the first byte (SMTPS, port 465 style) and offers no
STARTTLS; with --user it requires AUTH (PLAIN/LOGIN) with exactly that login, over TLS
when there is TLS.
"""
import argparse
import asyncio
import email
import email.policy
import json
import socket
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--implicit-tls", action="store_true")
    return p.parse_args()


class Handler:
    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        text = msg.get_body(("plain",))
        html = msg.get_body(("html",))
        print(json.dumps({
            "mailFrom": envelope.mail_from,
            "rcptTos": envelope.rcpt_tos,
            "subject": str(msg["subject"]),
            "messageId": str(msg["message-id"]),
            "text": text.get_content() if text else None,
            "html": html.get_content() if html else None,
            "login": session.auth_data if isinstance(session.auth_data, str) else None,
            "tls": session.ssl is not None
                   or server.transport.get_extra_info("ssl_object") is not None,
        }), flush=True)
        return "250 2.0.0 Message accepted for delivery"


def main():
    args = parse_args()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login.decode() == args.user
              and auth_data.password.decode() == args.password)
        return AuthResult(success=ok, auth_data=auth_data.login.decode() if ok else None)

    tls = None
    if args.cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(args.cert, args.key)

    implicit = tls is not None and args.implicit_tls

    def factory():
        # Implicit TLS wraps the whole connection (create_server below), so aiosmtpd
        # itself sees no STARTTLS to require before AUTH.
        starttls = tls if not implicit else None
        kwargs = dict(decode_data=False, tls_context=starttls,
                      require_starttls=starttls is not None)
        if args.user:
            kwargs.update(authenticator=authenticator, auth_required=True,
                          auth_require_tls=starttls is not None)
        return SMTP(Handler(), **kwargs)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    async def serve():
        server = await asyncio.get_running_loop().create_server(
            factory, sock=sock, ssl=tls if implicit else None)
        print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
        await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
