import type { Context, Hono } from 'hono';
import type { DashboardEnv } from './checks.ts';
import { checkJsonBody, checkSameOrigin, sessionCookie, tokenMatches } from './guard.ts';
import { HttpError, bodyUpTo, jsonReply } from './http.ts';

/** A token is a few dozen characters; a login body is never larger than this. */
const MAX_LOGIN_BYTES = 4096;

const FORM = 'application/x-www-form-urlencoded';

/**
 * The sign-in of a dashboard started with a token (docs/dashboard.md, "Who may use it"):
 * GET /login is a form; POST /login with the right token — form-encoded or `{"token": "…"}`, from
 * the dashboard's own origin — sets an HttpOnly, SameSite=Strict session cookie and sends the
 * browser to `/` (303); a wrong one is 401 UNAUTHORIZED (the form again, with the code, for a form).
 * The cookie is named by the port the request came in on (cookies are not kept apart by port).
 */
export function loginRoutes(app: Hono<DashboardEnv>, token: string): void {
  const page = (c: Context, status: 200 | 401, html: string): Response => c.body(html, status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  app.get('/login', (c) => page(c, 200, loginPage()));
  app.post(
    '/login',
    async function loginChecks(c, next) {
      checkSameOrigin(c.env.incoming.headers, c.get('host'));
      checkJsonBody(c.env.incoming.headers, [FORM, 'application/json']);
      await next();
    },
    bodyUpTo(MAX_LOGIN_BYTES),
    async (c) => {
      const type = checkJsonBody(c.env.incoming.headers, [FORM, 'application/json']);
      const text = await c.req.text();
      let presented: unknown;
      if (type === 'application/json') {
        try {
          presented = (JSON.parse(text) as { token?: unknown } | null)?.token;
        } catch {
          throw new HttpError(400, 'BAD_BODY', 'the request body is not JSON; expected {"token": "…"}');
        }
      } else {
        presented = new URLSearchParams(text).get('token') ?? undefined;
      }
      if (typeof presented === 'string' && tokenMatches(presented, token)) {
        return c.body(null, 303, { location: '/', 'set-cookie': sessionCookie(token, c.env.incoming.socket.localPort ?? 0), 'cache-control': 'no-store' });
      }
      const message = 'wrong token';
      if (type === FORM) return page(c, 401, loginPage(message));
      return jsonReply(c, 401, { code: 'UNAUTHORIZED', message });
    },
  );
}

/** The sign-in form: one password field, no script, nothing loaded from anywhere. */
export function loginPage(error?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>orrery dashboard · sign in</title>
  <style>
    body { font: 15px/1.4 system-ui, sans-serif; background: #0f1419; color: #e6e6e6; display: grid; place-items: center; min-height: 100vh; margin: 0; }
    form { background: #1a2129; padding: 24px 28px; border-radius: 8px; display: grid; gap: 12px; min-width: 300px; }
    h1 { font-size: 18px; margin: 0; }
    input { font: inherit; padding: 6px 8px; width: 100%; box-sizing: border-box; }
    button { font: inherit; padding: 6px 12px; }
    .error { color: #ff7b72; margin: 0; }
    .hint { color: #8b949e; font-size: 13px; margin: 0; }
  </style>
</head>
<body>
  <form method="post" action="/login" id="login-form">
    <h1>orrery dashboard</h1>
    ${error === undefined ? '' : `<p class="error" id="login-error" data-code="UNAUTHORIZED">${error}</p>`}
    <label>Token <input type="password" name="token" id="login-token" autocomplete="current-password" required autofocus></label>
    <button type="submit">Sign in</button>
    <p class="hint">The token is in the file given to <code>orrery dashboard --token-file</code> (or in ORRERY_DASHBOARD_TOKEN).</p>
  </form>
</body>
</html>
`;
}
