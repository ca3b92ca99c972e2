console.error('cli placeholder')
