/**
 * What `tidings serve` and `tidings api` print on stdout once the API listens (the JSON log lines go beside
 * it): the admin token when this start generated it (shown once; only its hash is stored), then where the API,
 * its OpenAPI document and the operator console are. README.md, "Quick start", shows it.
 */
export function startBanner(apiUrl: string | undefined, generatedAdminToken: string | null): string[] {
  const lines: string[] = [];
  if (generatedAdminToken !== null) {
    lines.push('', 'Admin API token (shown once, stored only as a hash; keep it):', '', `  ${generatedAdminToken}`, '');
  }
  if (apiUrl !== undefined) {
    lines.push(`Tidings API on ${apiUrl}  (OpenAPI: ${apiUrl}/api/v1/openapi.json)`);
    lines.push(`Console on ${apiUrl}/console  (sign in with the admin token or an operator API key)`);
  }
  return lines;
}
