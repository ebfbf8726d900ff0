// The private network of usePrivateNetworking (docs/deploy.md#private-networking): one virtual network with a
// subnet the Flex Consumption app joins for its outbound calls (delegated to Microsoft.App/environments, as Flex
// Consumption requires) and a subnet for the private endpoints of storage, Azure AI Search, Azure OpenAI and
// Document Intelligence; and the private DNS zones that make each service's usual host name resolve to its private
// endpoint from inside the network.

param name string
param location string
param tags object = {}
@description('Address space of the virtual network; the two /24 subnets are cut from its first /16.')
param addressPrefix string = '10.20.0.0/16'
@description('Subnet of the function app\'s virtual network integration (a /24 leaves room for scale-out).')
param appSubnetPrefix string = '10.20.1.0/24'
@description('Subnet of the private endpoints.')
param endpointSubnetPrefix string = '10.20.2.0/24'
@description('Private DNS zones to create and link to the network (privatelink.* names).')
param dnsZoneNames array

resource network 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: {
      addressPrefixes: [
        addressPrefix
      ]
    }
    subnets: [
      {
        name: 'app'
        properties: {
          addressPrefix: appSubnetPrefix
          delegations: [
            {
              name: 'flex-consumption'
              properties: {
                serviceName: 'Microsoft.App/environments'
              }
            }
          ]
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
      {
        name: 'private-endpoints'
        properties: {
          addressPrefix: endpointSubnetPrefix
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
    ]
  }
}

resource zones 'Microsoft.Network/privateDnsZones@2020-06-01' = [for zone in dnsZoneNames: {
  name: zone
  location: 'global'
  tags: tags
}]

resource links 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [for (zone, i) in dnsZoneNames: {
  parent: zones[i]
  name: '${name}-link'
  location: 'global'
  tags: tags
  properties: {
    registrationEnabled: false
    virtualNetwork: {
      id: network.id
    }
  }
}]

output id string = network.id
output appSubnetId string = '${network.id}/subnets/app'
output endpointSubnetId string = '${network.id}/subnets/private-endpoints'
output dnsZoneIds array = [for (zone, i) in dnsZoneNames: zones[i].id]
