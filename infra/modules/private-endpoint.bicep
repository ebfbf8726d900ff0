// One private endpoint (docs/deploy.md#private-networking): a network interface in the endpoints subnet that
// reaches one sub-resource (groupId) of a service, and its registration in the private DNS zone of that
// sub-resource, so the service's usual host name resolves to the endpoint's private address inside the network.

param name string
param location string
param tags object = {}
@description('Resource ID of the endpoints subnet.')
param subnetId string
@description('Resource ID of the service the endpoint reaches.')
param serviceId string
@description('Sub-resource of the service: blob, queue, table (storage), searchService (Azure AI Search), account (Azure OpenAI, Document Intelligence), topic (an Event Grid namespace\'s topics).')
@allowed([
  'blob'
  'queue'
  'table'
  'searchService'
  'account'
  'topic'
])
param groupId string
@description('Resource ID of the private DNS zone of that sub-resource.')
param dnsZoneId string

resource endpoint 'Microsoft.Network/privateEndpoints@2024-05-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    subnet: {
      id: subnetId
    }
    privateLinkServiceConnections: [
      {
        name: name
        properties: {
          privateLinkServiceId: serviceId
          groupIds: [
            groupId
          ]
        }
      }
    ]
  }
}

resource dns 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = {
  parent: endpoint
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [
      {
        name: replace(last(split(dnsZoneId, '/')), '.', '-')
        properties: {
          privateDnsZoneId: dnsZoneId
        }
      }
    ]
  }
}

output id string = endpoint.id
