"""Whether the AWS or Google credential chain can sign for a platform client, and which
exceptions of those chains mean "no usable credentials" (an auth error, never retried).

No LLM SDK here: the chains are boto3's and google-auth's (the SDK's platform clients
call them), imported when asked.
"""

from __future__ import annotations

from typing import Any

HINTS = {"bedrock": "AWS credentials (the standard chain: AWS_ACCESS_KEY_ID/"
                    "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO or an instance/task role) or "
                    "Bedrock's API key AWS_BEARER_TOKEN_BEDROCK",
         "vertex": "Google Application Default Credentials (gcloud auth application-default "
                   "login, GOOGLE_APPLICATION_CREDENTIALS, or the attached service account)"}


def found(platform: str, client: Any) -> bool:
    """Credentials for ``platform`` (``bedrock``: either Bedrock client; ``vertex``)."""
    if platform == "bedrock":
        if getattr(client, "api_key", None):  # Bedrock's API key (AWS_BEARER_TOKEN_BEDROCK)
            return True
        try:
            import boto3

            return boto3.Session(profile_name=getattr(client, "aws_profile", None),
                                 region_name=getattr(client, "aws_region", None)
                                 ).get_credentials() is not None
        except Exception:
            return False
    if getattr(client, "access_token", None) or getattr(client, "credentials", None):
        return True
    try:
        import google.auth

        google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except Exception:
        return False
    return True


def is_credential_error(exc: Exception) -> bool:
    names = {t.__name__ for t in type(exc).__mro__}
    return bool(names & {"NoCredentialsError", "DefaultCredentialsError", "RefreshError",
                         "GoogleAuthError", "BotoCoreError"}) or (
        isinstance(exc, RuntimeError) and "credentials" in str(exc).lower())
