#!/bin/sh
# azd postdeploy hook: stage 2 of the deployment. Event Grid validates the BlobCreated webhook subscription
# against the blob trigger, which answers only once the code runs, so the subscription is created after
# `azd deploy`, by provisioning again with BLOB_WEBHOOK_ENABLED=true (infra/modules/blob-webhook.bicep).
# Later `azd up` runs keep the setting and create the subscription in the first pass.
set -eu

if [ "${BLOB_WEBHOOK_ENABLED:-false}" = "true" ]; then
  echo "Event Grid BlobCreated subscription: already part of the deployment."
  exit 0
fi

azd env set BLOB_WEBHOOK_ENABLED true
# The host may still be starting after the deployment; Event Grid's validation then fails, so try a few times.
attempt=1
until azd provision --no-prompt; do
  if [ "$attempt" -ge 3 ]; then
    azd env set BLOB_WEBHOOK_ENABLED false
    echo "The BlobCreated subscription could not be created (is the function app running?). Run 'azd hooks run postdeploy' to retry." >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  echo "Retrying in 60 s (attempt $attempt of 3)..."
  sleep 60
done
echo "Event Grid BlobCreated subscription created: uploads to the documents container now trigger ingest_document."
