# azd postdeploy hook (Windows): stage 2 of the deployment, the same steps as postdeploy.sh. Event Grid validates
# the BlobCreated webhook subscription against the running blob trigger, so it is created after `azd deploy`.
$ErrorActionPreference = 'Stop'

if ($env:BLOB_WEBHOOK_ENABLED -eq 'true') {
    Write-Host 'Event Grid BlobCreated subscription: already part of the deployment.'
    exit 0
}

azd env set BLOB_WEBHOOK_ENABLED true
for ($attempt = 1; $attempt -le 3; $attempt++) {
    azd provision --no-prompt
    if ($LASTEXITCODE -eq 0) {
        Write-Host 'Event Grid BlobCreated subscription created: uploads to the documents container now trigger ingest_document.'
        exit 0
    }
    if ($attempt -lt 3) {
        Write-Host "Retrying in 60 s (attempt $($attempt + 1) of 3)..."
        Start-Sleep -Seconds 60
    }
}
azd env set BLOB_WEBHOOK_ENABLED false
Write-Error "The BlobCreated subscription could not be created (is the function app running?). Run 'azd hooks run postdeploy' to retry."
exit 1
